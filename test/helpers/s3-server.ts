import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "@20minutes/s3rver";
import type { TestProject } from "vitest/node";
import { S3_BUCKET } from "../edge/files/s3";

/**
 * vitest globalSetup of the edge project: an S3-compatible server on 127.0.0.1 that checks
 * SigV4 signatures (header and presigned-query forms) and expiry, so presigned R2 URLs are
 * proven against a real verifier. The port reaches workerd tests through `inject("s3Port")`.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const directory = await mkdtemp(join(tmpdir(), "ffedge-s3-"));
  const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: S3_BUCKET }] });
  const address = (await server.run()) as AddressInfo;
  project.provide("s3Port", address.port);
  return async () => {
    await server.close();
    await rm(directory, { recursive: true, force: true });
  };
}
