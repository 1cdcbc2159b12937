import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { CreateDestinationSchema } from "../../../shared/schemas/destinations";
import { checkEndpoint, createDestination, openCredentials, testDestination, updateDestination } from "../../../edge/destinations/manage";
import { findDestination } from "../../../edge/destinations/repository";
import { createUser, productionEnv } from "../helpers";
import { S3_SECRET_ACCESS_KEY } from "../files/s3";
import { destinationBody, s3Object } from "./fixtures";

async function saved(overrides: Record<string, unknown> = {}) {
  const { userId } = await createUser();
  const row = await createDestination(env, userId, CreateDestinationSchema.parse(destinationBody(overrides)));
  return { userId, row };
}

async function refusal(work: Promise<unknown>): Promise<AppError> {
  const error = await work.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("destination credentials", () => {
  it("are stored sealed: the row holds neither half of the key pair, and opens to both", async () => {
    const { row } = await saved({ access_key_id: "AKIAEXAMPLEKEY", secret_access_key: "a-very-secret-secret" });
    const stored = await env.DB.prepare("SELECT * FROM destinations WHERE id = ?").bind(row.id).first<Record<string, unknown>>();
    expect(JSON.stringify(stored)).not.toContain("a-very-secret-secret");
    expect(JSON.stringify(stored)).not.toContain("AKIAEXAMPLEKEY");
    expect(stored!.fingerprint).toMatch(/^AKIA…[0-9a-f]{8}$/);
    expect(await openCredentials(env, row)).toEqual({ access_key_id: "AKIAEXAMPLEKEY", secret_access_key: "a-very-secret-secret" });
  });

  it("do not open when moved to another user's row", async () => {
    const { row } = await saved();
    const { row: other } = await saved();
    await expect(openCredentials(env, { ...other, credentials: row.credentials })).rejects.toThrow();
  });

  it("are sealed again when either half is replaced, with a new fingerprint", async () => {
    const { userId, row } = await saved();
    const changed = await updateDestination(env, userId, row.name, { secret_access_key: "replaced-secret" });
    expect(changed.fingerprint).not.toBe(row.fingerprint);
    expect(await openCredentials(env, changed)).toEqual({ access_key_id: (await openCredentials(env, row)).access_key_id, secret_access_key: "replaced-secret" });
    expect((await findDestination(env.DB, userId, row.id))!.credentials).toBe(changed.credentials);
  });
});

describe("checkEndpoint", () => {
  it.each([
    ["a private address", "http://10.0.0.5", "URL_HOST_BLOCKED"],
    ["the cloud metadata address", "http://169.254.169.254", "URL_HOST_BLOCKED"],
    ["the cloud metadata name", "http://metadata.google.internal", "URL_HOST_BLOCKED"],
    ["loopback by name", "http://localhost:9000", "URL_NOT_ALLOWED"],
    ["an IPv6 loopback", "http://[::1]", "URL_HOST_BLOCKED"],
    ["a public host on another port", "https://s3.example.com:9000", "URL_NOT_ALLOWED"],
    ["credentials in the URL", "https://user:pass@s3.example.com", "URL_NOT_ALLOWED"],
    ["a path", "https://s3.example.com/bucket", "URL_NOT_ALLOWED"],
  ])("refuses %s", (_case, endpoint, code) => {
    expect(() => checkEndpoint(env, endpoint)).toThrow(expect.objectContaining({ code }));
  });

  it("refuses plain http outside production too, except to the development allow-list's hosts (a local S3 server)", () => {
    expect(() => checkEndpoint(env, "http://s3.example.com")).toThrow(expect.objectContaining({ code: "URL_NOT_ALLOWED" }));
    expect(checkEndpoint(env, "http://127.0.0.1:9000")).toBe("http://127.0.0.1:9000");
  });

  it("refuses plain http in production, and keeps an https endpoint as its origin", () => {
    expect(() => checkEndpoint(productionEnv(), "http://s3.example.com")).toThrow(expect.objectContaining({ code: "URL_NOT_ALLOWED" }));
    expect(checkEndpoint(productionEnv(), "https://s3.example.com/")).toBe("https://s3.example.com");
  });

  it("ignores the development allow-list in production", () => {
    expect(() => checkEndpoint(productionEnv({ DEV_FETCH_ALLOW_HOSTS: "127.0.0.1" }), "https://127.0.0.1")).toThrow(expect.objectContaining({ code: "URL_HOST_BLOCKED" }));
  });
});

describe("testDestination", () => {
  it("writes a probe object under the prefix and deletes it again", async () => {
    const { userId, row } = await saved();
    const result = await testDestination(env, userId, row.id);
    expect(result.key.startsWith(row.prefix)).toBe(true);
    expect(await s3Object(result.key)).toBeUndefined();
  });

  it("names wrong credentials DESTINATION_CREDENTIALS", async () => {
    const { userId, row } = await saved({ secret_access_key: `${S3_SECRET_ACCESS_KEY}-wrong` });
    const error = await refusal(testDestination(env, userId, row.id));
    expect(error.code).toBe("DESTINATION_CREDENTIALS");
    expect(error.extra).toMatchObject({ s3_code: "SignatureDoesNotMatch" });
  });

  it("names an unknown key id DESTINATION_CREDENTIALS", async () => {
    const { userId, row } = await saved({ access_key_id: "NOSUCHKEY" });
    expect((await refusal(testDestination(env, userId, row.id))).code).toBe("DESTINATION_CREDENTIALS");
  });

  it("names a missing bucket DESTINATION_REFUSED with S3's code", async () => {
    const { userId, row } = await saved({ bucket: "no-such-bucket" });
    const error = await refusal(testDestination(env, userId, row.id));
    expect(error.code).toBe("DESTINATION_REFUSED");
    expect(error.extra).toMatchObject({ s3_code: "NoSuchBucket" });
  });

  it("names a server that does not answer DESTINATION_UNREACHABLE", async () => {
    const { userId, row } = await saved({ endpoint: "http://127.0.0.1:9" });
    expect((await refusal(testDestination(env, userId, row.id))).code).toBe("DESTINATION_UNREACHABLE");
  });
});
