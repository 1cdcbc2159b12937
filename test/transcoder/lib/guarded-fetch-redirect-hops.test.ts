import { mkdtemp, readFile, rm } from "node:fs/promises";
import type http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { type GuardedFetchOptions, type Resolver, downloadToFile } from "../../../transcoder/lib/guarded-fetch";
import { type MediaServer, serveText, startMediaServer } from "../helpers/servers";

let dir: string;
let server: MediaServer;
let port: string;
const BODY = "redirected body";

/** `/hop?to=<location>` answers 302 with that Location byte for byte, as a hostile origin would. */
const hop = (request: http.IncomingMessage, response: http.ServerResponse): void => {
  const location = new URL(request.url ?? "/", "http://origin").searchParams.get("to") ?? "/";
  response.writeHead(302, { location }).end();
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ffedge-hops-"));
  server = await startMediaServer({ "/file.bin": serveText(BODY, "application/octet-stream"), "/hop": hop });
  port = new URL(server.url("/")).port;
});

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

const options: GuardedFetchOptions = { allowHosts: ["127.0.0.1"], maxBytes: 1_000_000, timeoutMs: 5_000, retry: { attempts: 1 } };
let counter = 0;
const destination = () => path.join(dir, `hop-${++counter}`);
const through = (location: string) => server.url(`/hop?to=${encodeURIComponent(location)}`);

async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (error === undefined) return "DOWNLOADED";
  expect(error).toBeInstanceOf(AppError);
  return (error as AppError).code;
}

describe("downloadToFile: every redirect hop is judged as written", () => {
  it.each([
    ["hex", (p: string) => `http://0x7f000001:${p}/file.bin`],
    ["integer", (p: string) => `http://2130706433:${p}/file.bin`],
    ["short form", (p: string) => `http://127.1:${p}/file.bin`],
    ["octal", (p: string) => `http://0177.0.0.1:${p}/file.bin`],
    ["scheme-relative hex", (p: string) => `//0x7f000001:${p}/file.bin`],
    ["a backslash before '@'", (p: string) => `http://127.0.0.1:${p}\\@example.com/file.bin`],
    ["a port with a leading zero", (p: string) => `http://127.0.0.1:0${p}/file.bin`],
  ])("refuses a hop to the allow-listed loopback written in %s, as at submission, without fetching it", async (_form, location) => {
    const target = location(port);
    const submitted = target.startsWith("//") ? `http:${target}` : target;
    const atSubmission = await codeOf(downloadToFile(submitted, destination(), options));
    expect(atSubmission).not.toBe("DOWNLOADED");
    const hits = server.hits.length;
    expect(await codeOf(downloadToFile(through(target), destination(), options))).toBe(atSubmission);
    expect(server.hits.slice(hits)).toEqual(["/hop"]);
  });

  it("refuses a relative Location that WHATWG would read as another host", async () => {
    const resolve: Resolver = (_hostname, callback) => callback(null, [{ address: "127.0.0.1", family: 4 }]);
    const withName = { ...options, allowHosts: ["127.0.0.1", "media.example.test"], resolve };
    const hits = server.hits.length;
    expect(await codeOf(downloadToFile(through(`/\\media.example.test:${port}/file.bin`), destination(), withName))).toBe("URL_NOT_ALLOWED");
    expect(server.hits.slice(hits)).toEqual(["/hop"]);
  });

  it("still follows a hop written plainly", async () => {
    const file = destination();
    const result = await downloadToFile(through(`http://127.0.0.1:${port}/file.bin`), file, options);
    expect(result.url.pathname).toBe("/file.bin");
    expect(await readFile(file, "utf8")).toBe(BODY);
  });
});
