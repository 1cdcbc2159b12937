import { AwsClient } from "aws4fetch";
import { inject } from "vitest";
import { S3_ACCESS_KEY_ID, S3_BUCKET, S3_SECRET_ACCESS_KEY } from "../files/s3";

/** The SigV4-verifying S3 server of the edge tests (test/helpers/s3-server.ts). */
export function s3Endpoint(): string {
  return `http://127.0.0.1:${inject("s3Port")}`;
}

/** A destination body on that server, under a prefix of its own; `overrides` change any field. */
export function destinationBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `local-${crypto.randomUUID().slice(0, 8)}`, type: "s3", endpoint: s3Endpoint(), region: "us-east-1", bucket: S3_BUCKET,
    prefix: `tests/${crypto.randomUUID().slice(0, 8)}/`, access_key_id: S3_ACCESS_KEY_ID, secret_access_key: S3_SECRET_ACCESS_KEY,
    ...overrides,
  };
}

/** What the S3 server holds at `key`, read with the server's own key pair; undefined for NoSuchKey. */
export async function s3Object(key: string): Promise<string | undefined> {
  const client = new AwsClient({ accessKeyId: S3_ACCESS_KEY_ID, secretAccessKey: S3_SECRET_ACCESS_KEY, service: "s3", region: "us-east-1" });
  const response = await client.fetch(`${s3Endpoint()}/${S3_BUCKET}/${key}`);
  if (response.status === 404) {
    await response.body?.cancel();
    return undefined;
  }
  if (!response.ok) throw new Error(`GET ${key}: ${response.status} ${await response.text()}`);
  return response.text();
}
