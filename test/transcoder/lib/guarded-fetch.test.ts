import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import type http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { type GuardedFetchOptions, type Resolver, downloadToFile } from "../../../transcoder/lib/guarded-fetch";
import { type MediaServer, redirectTo, serveText, startMediaServer } from "../helpers/servers";

let dir: string;
let server: MediaServer;
let port: string;
const BODY = "0123456789".repeat(100);

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ffedge-fetch-"));
  server = await startMediaServer({
    "/file.bin": serveText(BODY, "application/octet-stream"),
    "/one": redirectTo("/file.bin"),
    "/r3": redirectTo("/r2", 301),
    "/r2": redirectTo("/r1", 307),
    "/r1": redirectTo("/file.bin", 308),
    "/r4": redirectTo("/r3"),
    "/to-metadata": redirectTo("http://169.254.169.254/latest/meta-data/"),
    "/to-localhost": redirectTo("http://localhost/file.bin"),
    "/to-file": redirectTo("file:///etc/passwd"),
    "/chunked": (_request: http.IncomingMessage, response: http.ServerResponse) => {
      response.writeHead(200);
      const chunk = "x".repeat(1000);
      for (let i = 0; i < 5; i++) response.write(chunk);
      response.end();
    },
    "/slow": (_request: http.IncomingMessage, response: http.ServerResponse) => {
      response.writeHead(200, { "content-length": "100000" });
      response.write("partial");
    },
    "/short": (_request: http.IncomingMessage, response: http.ServerResponse) => {
      response.writeHead(200, { "content-length": "5000" });
      response.end("only this");
    },
    "/teapot": (_request: http.IncomingMessage, response: http.ServerResponse) => void response.writeHead(418).end(),
  });
  port = new URL(server.url("/")).port;
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

let fileCounter = 0;
const destination = () => path.join(dir, `download-${++fileCounter}`);
// Short waits between tries: the retries themselves are tested in guarded-fetch-retry.test.ts.
const local: GuardedFetchOptions = { allowHosts: ["127.0.0.1"], maxBytes: 1_000_000, timeoutMs: 5_000, retry: { attempts: 2, baseDelayMs: 10, maxDelayMs: 10 } };

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

async function expectNothingStored(): Promise<void> {
  expect((await readdir(dir)).filter((name) => !name.startsWith("kept-"))).toEqual([]);
}

describe("downloadToFile", () => {
  it("stores the body of an allowed URL", async () => {
    const file = path.join(dir, "kept-file");
    const result = await downloadToFile(server.url("/file.bin"), file, local);
    expect(result.bytes).toBe(BODY.length);
    expect(await readFile(file, "utf8")).toBe(BODY);
  });

  it.each([
    ["loopback", "http://127.0.0.1/x.mp4"],
    ["loopback in decimal", "http://2130706433/x.mp4"],
    ["loopback in hex short form", "http://0x7f.1/x.mp4"],
    ["IPv4-mapped IPv6 loopback", "http://[::ffff:127.0.0.1]/x.mp4"],
    ["IPv6 loopback", "http://[::1]/x.mp4"],
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/"],
    ["a private network", "http://10.1.2.3/x.mp4"],
    ["CGNAT", "http://100.64.0.1/x.mp4"],
    ["IPv6 unique local", "http://[fd00::1]/x.mp4"],
    ["localhost by name", "http://localhost/x.mp4"],
    ["a metadata name", "http://metadata.google.internal/x"],
  ])("refuses %s with URL_HOST_BLOCKED", async (_name, url) => {
    expect((await refusal(downloadToFile(url, destination(), { ...local, allowHosts: [] }))).code).toBe("URL_HOST_BLOCKED");
    await expectNothingStored();
  });

  it.each([
    ["file:", "file:///etc/passwd"],
    ["ftp:", "ftp://example.com/x.mp4"],
    ["gopher:", "gopher://example.com/x"],
    ["credentials", "http://user:secret@example.com/x.mp4"],
    ["a non-default port", "http://example.com:8080/x.mp4"],
  ])("refuses %s with URL_NOT_ALLOWED", async (_name, url) => {
    expect((await refusal(downloadToFile(url, destination(), local))).code).toBe("URL_NOT_ALLOWED");
  });

  it("refuses at connect time a name that resolves to a blocked address, checking every answer", async () => {
    const asked: string[] = [];
    const resolve: Resolver = (hostname, callback) => {
      asked.push(hostname);
      callback(null, [{ address: "93.184.216.34", family: 4 }, { address: "127.0.0.1", family: 4 }]);
    };
    const error = await refusal(downloadToFile("http://media.example.com/x.mp4", destination(), { ...local, resolve }));
    expect(error.code).toBe("URL_HOST_BLOCKED");
    expect(asked).toEqual(["media.example.com"]);
    await expectNothingStored();
  });

  it("connects to exactly the address its own lookup checked", async () => {
    let lookups = 0;
    const resolve: Resolver = (_hostname, callback) => {
      lookups++;
      callback(null, [{ address: "127.0.0.1", family: 4 }]);
    };
    const file = path.join(dir, "kept-resolved");
    const options = { ...local, allowHosts: ["media.example.test"], resolve };
    await downloadToFile(`http://media.example.test:${port}/file.bin`, file, options);
    expect(await readFile(file, "utf8")).toBe(BODY);
    expect(lookups).toBe(1);
  });

  it("follows up to three redirects, each checked", async () => {
    const file = path.join(dir, "kept-redirected");
    const result = await downloadToFile(server.url("/r3"), file, local);
    expect(result.url.pathname).toBe("/file.bin");
    expect(await readFile(file, "utf8")).toBe(BODY);
  });

  it("refuses a fourth redirect with URL_TOO_MANY_REDIRECTS", async () => {
    expect((await refusal(downloadToFile(server.url("/r4"), destination(), local))).code).toBe("URL_TOO_MANY_REDIRECTS");
    await expectNothingStored();
  });

  it.each([
    ["a metadata address", "/to-metadata", "URL_HOST_BLOCKED"],
    ["localhost", "/to-localhost", "URL_HOST_BLOCKED"],
    ["a file: URL", "/to-file", "URL_NOT_ALLOWED"],
  ])("does not follow a redirect to %s", async (_name, route, code) => {
    const hits = server.hits.length;
    expect((await refusal(downloadToFile(server.url(route), destination(), local))).code).toBe(code);
    expect(server.hits.length).toBe(hits + 1);
    await expectNothingStored();
  });

  it("refuses a declared Content-Length over the limit before reading the body", async () => {
    expect((await refusal(downloadToFile(server.url("/file.bin"), destination(), { ...local, maxBytes: 999 }))).code).toBe("PAYLOAD_TOO_LARGE");
    await expectNothingStored();
  });

  it("stops a body without Content-Length once it passes the limit", async () => {
    expect((await refusal(downloadToFile(server.url("/chunked"), destination(), { ...local, maxBytes: 2_500 }))).code).toBe("PAYLOAD_TOO_LARGE");
    await expectNothingStored();
  });

  it("gives up on a body that arrives too slowly with URL_TIMEOUT", async () => {
    const started = Date.now();
    expect((await refusal(downloadToFile(server.url("/slow"), destination(), { ...local, timeoutMs: 300 }))).code).toBe("URL_TIMEOUT");
    expect(Date.now() - started).toBeLessThan(2_000);
    await expectNothingStored();
  });

  it("refuses a body shorter than its Content-Length", async () => {
    expect((await refusal(downloadToFile(server.url("/short"), destination(), local))).code).toBe("URL_UNREACHABLE");
    await expectNothingStored();
  });

  it("reports an error status with URL_REMOTE_STATUS and a refused connection with URL_UNREACHABLE", async () => {
    expect((await refusal(downloadToFile(server.url("/teapot"), destination(), local))).code).toBe("URL_REMOTE_STATUS");
    expect((await refusal(downloadToFile("http://127.0.0.1:1/x", destination(), local))).code).toBe("URL_UNREACHABLE");
    await expectNothingStored();
  });

  it("rethrows the caller's abort reason", async () => {
    const controller = new AbortController();
    const reason = new Error("job canceled");
    setTimeout(() => controller.abort(reason), 100);
    await expect(downloadToFile(server.url("/slow"), destination(), { ...local, signal: controller.signal })).rejects.toBe(reason);
    await expectNothingStored();
  });
});
