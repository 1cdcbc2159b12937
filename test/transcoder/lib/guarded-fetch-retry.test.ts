import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { type GuardedFetchOptions, type Resolver, downloadToFile } from "../../../transcoder/lib/guarded-fetch";

// A real origin on 127.0.0.1 that misbehaves on purpose, one connection or request at a time:
// resets (RST), cut bodies, gateway errors, silence. No fetch or socket is mocked.

const BODY = randomBytes(256 * 1024);

type Behaviour = "reset" | "cut-body" | "503" | "502" | "504" | "404" | "500" | "silent" | "ok";

interface Origin {
  url: string;
  /** Connections accepted so far. */
  connections: number;
  /** What each next connection does; "ok" once the list runs out. */
  script: Behaviour[];
  close(): Promise<void>;
}

async function startOrigin(script: Behaviour[], port = 0): Promise<Origin> {
  const sockets = new Set<Socket>();
  const plans = new WeakMap<Socket, Behaviour>();
  const server = http.createServer((request, response) => {
    const plan = plans.get(request.socket) ?? "ok";
    if (plan === "silent") return;
    if (plan === "cut-body") {
      response.writeHead(200, { "content-length": String(BODY.length), "content-type": "video/mp4" });
      response.write(BODY.subarray(0, BODY.length / 2), () => request.socket.destroy());
      return;
    }
    if (plan !== "ok") return void response.writeHead(Number(plan)).end();
    response.writeHead(200, { "content-length": String(BODY.length), "content-type": "video/mp4" }).end(BODY);
  });
  // keep-alive off: every try of the client is a new connection, so each follows the script.
  server.keepAliveTimeout = 1;
  const origin: Origin = {
    url: "",
    connections: 0,
    script,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    const plan = origin.script[origin.connections++] ?? "ok";
    if (plan === "reset") return socket.resetAndDestroy();
    plans.set(socket, plan);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  origin.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/input.mp4`;
  return origin;
}

let dir: string;
let origin: Origin | undefined;
let fileCounter = 0;
const destination = () => path.join(dir, `download-${++fileCounter}`);
const fast: GuardedFetchOptions = {
  allowHosts: ["127.0.0.1"],
  maxBytes: 10_000_000,
  timeoutMs: 30_000,
  retry: { attempts: 5, baseDelayMs: 20, maxDelayMs: 100, headersTimeoutMs: 5_000 },
};

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "ffedge-fetch-retry-"));
});
afterEach(async () => {
  await origin?.close();
  origin = undefined;
  for (const name of await readdir(dir)) await rm(path.join(dir, name), { force: true });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

async function expectWholeBody(file: string): Promise<void> {
  expect((await readFile(file)).equals(BODY)).toBe(true);
}

describe("downloadToFile through transient failures", () => {
  it("tries again after connections reset before any answer, and stores the whole body", async () => {
    origin = await startOrigin(["reset", "reset", "reset"]);
    const file = destination();
    const result = await downloadToFile(origin.url, file, fast);
    expect(result.bytes).toBe(BODY.length);
    await expectWholeBody(file);
    expect(origin.connections).toBe(4);
  });

  it("starts over from the first byte after a connection is cut mid-body", async () => {
    origin = await startOrigin(["cut-body", "cut-body"]);
    const file = destination();
    await downloadToFile(origin.url, file, fast);
    await expectWholeBody(file);
    expect(origin.connections).toBe(3);
  });

  it.each(["502", "503", "504"] as const)("tries again after a %s answer", async (status) => {
    origin = await startOrigin([status, status]);
    const file = destination();
    await downloadToFile(origin.url, file, fast);
    await expectWholeBody(file);
    expect(origin.connections).toBe(3);
  });

  it("abandons a try that gets no response headers in time, and tries again", async () => {
    origin = await startOrigin(["silent"]);
    const file = destination();
    await downloadToFile(origin.url, file, { ...fast, retry: { ...fast.retry, headersTimeoutMs: 300 } });
    await expectWholeBody(file);
    expect(origin.connections).toBe(2);
  });

  it("waits out an origin that refuses connections until it listens again", async () => {
    const placeholder = await startOrigin([]);
    const port = Number(new URL(placeholder.url).port);
    await placeholder.close();
    const file = destination();
    const download = downloadToFile(placeholder.url, file, { ...fast, retry: { attempts: 100, baseDelayMs: 20, maxDelayMs: 50, headersTimeoutMs: 5_000 } });
    // Refused tries leave no trace on the origin; it comes back after a few of them.
    await new Promise((resolve) => setTimeout(resolve, 300));
    origin = await startOrigin([], port);
    await download;
    await expectWholeBody(file);
  });

  it.each([
    { every: "reset" as Behaviour, code: "URL_UNREACHABLE", detail: "(5 tries)", why: "saying how many tries were made" },
    { every: "503" as Behaviour, code: "URL_REMOTE_STATUS", detail: "answered 503", why: "keeping the last gateway answer as the reason" },
  ])("gives up after the last try when every try gets $every, $why, and leaves no file", async ({ every, code, detail }) => {
    origin = await startOrigin(Array<Behaviour>(10).fill(every));
    const error = await failure(downloadToFile(origin.url, destination(), fast));
    expect(error.code).toBe(code);
    expect(error.detail).toContain(detail);
    expect(origin.connections).toBe(5);
    expect(await readdir(dir)).toEqual([]);
  });

  it("stops retrying at the overall deadline with URL_TIMEOUT", async () => {
    origin = await startOrigin(Array<Behaviour>(1000).fill("503"));
    const options = { ...fast, timeoutMs: 500, retry: { attempts: 1000, baseDelayMs: 50, maxDelayMs: 50, headersTimeoutMs: 5_000 } };
    expect((await failure(downloadToFile(origin.url, destination(), options))).code).toBe("URL_TIMEOUT");
    expect(origin.connections).toBeLessThan(1000);
    expect(await readdir(dir)).toEqual([]);
  });

  it.each([
    ["a 404", "404", {}, "URL_REMOTE_STATUS"],
    ["a 500", "500", {}, "URL_REMOTE_STATUS"],
    ["a body over the size limit", "ok", { maxBytes: 1_000 }, "PAYLOAD_TOO_LARGE"],
  ] as const)("never tries again after %s", async (_name, behaviour, override, code) => {
    origin = await startOrigin([behaviour]);
    expect((await failure(downloadToFile(origin.url, destination(), { ...fast, ...override }))).code).toBe(code);
    expect(origin.connections).toBe(1);
  });

  it("never tries again after the connect-time address check refuses a name", async () => {
    let lookups = 0;
    const resolve: Resolver = (_hostname, callback) => {
      lookups++;
      callback(null, [{ address: "127.0.0.1", family: 4 }]);
    };
    const error = await failure(downloadToFile("http://media.example.com/input.mp4", destination(), { ...fast, allowHosts: [], resolve }));
    expect(error.code).toBe("URL_HOST_BLOCKED");
    expect(lookups).toBe(1);
  });

  it("stops waiting between tries when the caller aborts, and rethrows its reason", async () => {
    origin = await startOrigin(Array<Behaviour>(1000).fill("reset"));
    const controller = new AbortController();
    const reason = new Error("job canceled");
    const options = { ...fast, signal: controller.signal, retry: { attempts: 1000, baseDelayMs: 60_000, maxDelayMs: 60_000, headersTimeoutMs: 5_000 } };
    const download = downloadToFile(origin.url, destination(), options);
    for (const deadline = Date.now() + 20_000; origin.connections === 0 && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort(reason);
    await expect(download).rejects.toBe(reason);
    expect(origin.connections).toBe(1);
  });
});
