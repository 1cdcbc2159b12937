/** What console-workflows.test.ts uses besides the stack: a local S3-compatible server, a port nothing answers on, the Destinations form, the phone check. */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "@20minutes/s3rver";
import type { Page } from "playwright-core";
import { expect } from "vitest";
import { PATIENT } from "./console-session";

/** s3rver's built-in account: the only key pair whose signatures it accepts. */
export const S3RVER_KEY = "S3RVER";

/** A local S3-compatible server with the bucket user-media, started at the first ask for its endpoint. */
export class LocalS3 {
  private started?: Promise<{ server: S3rver; directory: string; endpoint: string }>;

  async endpoint(): Promise<string> {
    this.started ??= (async () => {
      const directory = await mkdtemp(join(tmpdir(), "ffedge-console-s3-"));
      const server = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory, configureBuckets: [{ name: "user-media" }] });
      const { port } = (await server.run()) as AddressInfo;
      return { server, directory, endpoint: `http://127.0.0.1:${port}` };
    })();
    return (await this.started).endpoint;
  }

  async close(): Promise<void> {
    if (!this.started) return;
    const { server, directory } = await this.started;
    await server.close();
    await rm(directory, { recursive: true, force: true });
  }
}

/** A local port nothing listens on: taken from the system, then released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Fills and sends the add form of the Destinations page (already open) for the bucket user-media; waits for the new row. */
export async function addDestination(page: Page, fields: { name: string; endpoint: string; key: string; secret: string }): Promise<void> {
  await page.getByLabel("Name", { exact: true }).fill(fields.name);
  await page.getByLabel("Endpoint (empty for AWS S3)").fill(fields.endpoint);
  await page.getByLabel("Region", { exact: true }).fill("us-east-1");
  await page.getByLabel("Bucket", { exact: true }).fill("user-media");
  await page.getByLabel("Access key id").fill(fields.key);
  await page.getByLabel("Secret access key").fill(fields.secret);
  await page.getByLabel("Addressing").selectOption("true");
  await page.getByRole("button", { name: "Add destination" }).click();
  await expect.poll(() => page.locator(`#destination-table tr[data-destination="${fields.name}"]`).count(), PATIENT).toBe(1);
}

/** Visible buttons that reach past the screen's right edge (runs in the page; the node project has no DOM types). */
export const CLIPPED_BUTTONS = `[...document.querySelectorAll("button")]
  .filter((button) => button.offsetParent !== null && button.getBoundingClientRect().right > window.innerWidth)
  .map((button) => button.textContent)`;
