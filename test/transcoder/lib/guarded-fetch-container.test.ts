import { mkdtemp, readFile, rm } from "node:fs/promises";
import type http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EGRESS_REFUSED_HEADER } from "../../../shared/egress";
import { AppError } from "../../../shared/errors";
import { type GuardedFetchOptions, type Resolver, downloadToFile, guardedLookup } from "../../../transcoder/lib/guarded-fetch";
import { type MediaServer, redirectTo, serveText, startMediaServer } from "../helpers/servers";

// Inside a Cloudflare Container the sidecar answers DNS with placeholders (11.0.0.1 and fd00::1
// under `wrangler dev`) and hands every connection to the Worker's outbound handler.
const placeholders: Resolver = (_hostname, callback) => callback(null, [{ address: "11.0.0.1", family: 4 }, { address: "fd00::1", family: 6 }]);

let dir: string;
let server: MediaServer;
let counter = 0;
const destination = () => path.join(dir, `download-${++counter}`);
// One try each: retries are tested in guarded-fetch-retry.test.ts, and these count lookups.
const container: GuardedFetchOptions = { allowHosts: ["127.0.0.1"], maxBytes: 1_000_000, timeoutMs: 5_000, egress: "container", retry: { attempts: 1 } };

const refusedByWorker = (code: string, detail: string): http.RequestListener => (_request, response) => {
  response.writeHead(400, { "content-type": "application/problem+json", [EGRESS_REFUSED_HEADER]: code }).end(JSON.stringify({ code, detail }));
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ffedge-egress-"));
  server = await startMediaServer({
    "/file.bin": serveText("container bytes", "application/octet-stream"),
    "/refused": refusedByWorker("URL_HOST_BLOCKED", "The host 'db.example.com' resolves to 10.0.0.5, which is private."),
    "/refused-unknown-code": refusedByWorker("SOMETHING_ELSE", "no"),
    "/to-localhost": redirectTo("http://localhost/file.bin"),
  });
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe("guardedLookup with container egress", () => {
  const lookup = (allowHosts: readonly string[] | "any") =>
    new Promise<{ error: Error | null; address: unknown }>((resolve) => {
      guardedLookup(placeholders, allowHosts)("media.example.com", { all: true }, (error, address) => resolve({ error, address }));
    });

  it("answers with the platform's placeholder addresses instead of refusing them", async () => {
    const { error, address } = await lookup("any");
    expect(error).toBeNull();
    expect(address).toEqual([{ address: "11.0.0.1", family: 4 }, { address: "fd00::1", family: 6 }]);
  });

  it("still refuses them for a process that connects by itself", async () => {
    const { error } = await lookup([]);
    expect((error as AppError).code).toBe("URL_HOST_BLOCKED");
  });
});

describe("downloadToFile with container egress", () => {
  it("does not judge the placeholder DNS answers of a public name: the connection is attempted", async () => {
    const asked: string[] = [];
    const resolve: Resolver = (hostname, callback) => {
      asked.push(hostname);
      // fd00::1 alone made every input fail URL_HOST_BLOCKED in a container before.
      callback(null, [{ address: "127.0.0.1", family: 4 }, { address: "fd00::1", family: 6 }]);
    };
    const direct = await failure(downloadToFile("http://media.example.com/x.mp4", destination(), { ...container, egress: "direct", allowHosts: [], resolve }));
    expect(direct.code).toBe("URL_HOST_BLOCKED");
    const inContainer = await failure(downloadToFile("http://media.example.com/x.mp4", destination(), { ...container, allowHosts: [], resolve, timeoutMs: 2_000 }));
    // Nothing listens on 127.0.0.1:80 here; what matters is that the address was not refused.
    expect(inContainer.code).not.toBe("URL_HOST_BLOCKED");
    expect(asked).toEqual(["media.example.com", "media.example.com"]);
  });

  it("downloads what the outbound handler passes through", async () => {
    const file = destination();
    const result = await downloadToFile(server.url("/file.bin"), file, container);
    expect(result.bytes).toBe("container bytes".length);
    expect(await readFile(file, "utf8")).toBe("container bytes");
  });

  it("turns the outbound handler's refusal into its error code and detail, storing nothing", async () => {
    const file = destination();
    const error = await failure(downloadToFile(server.url("/refused"), file, container));
    expect(error.code).toBe("URL_HOST_BLOCKED");
    expect(error.detail).toContain("resolves to 10.0.0.5");
    await expect(readFile(file)).rejects.toThrow();
  });

  it("maps a refusal with an unknown code to URL_UNREACHABLE", async () => {
    expect((await failure(downloadToFile(server.url("/refused-unknown-code"), destination(), container))).code).toBe("URL_UNREACHABLE");
  });

  it("does not trust the refusal header outside a container: an origin cannot choose the error", async () => {
    expect((await failure(downloadToFile(server.url("/refused"), destination(), { ...container, egress: "direct" }))).code).toBe("URL_REMOTE_STATUS");
  });

  it("keeps the URL policy: literals and internal names are refused before any request", async () => {
    const before = server.hits.length;
    expect((await failure(downloadToFile("http://169.254.169.254/latest/meta-data/", destination(), container))).code).toBe("URL_HOST_BLOCKED");
    expect((await failure(downloadToFile("http://metadata.google.internal/x", destination(), container))).code).toBe("URL_HOST_BLOCKED");
    expect((await failure(downloadToFile(server.url("/to-localhost"), destination(), container))).code).toBe("URL_HOST_BLOCKED");
    expect(server.hits.slice(before)).toEqual(["/to-localhost"]);
  });
});
