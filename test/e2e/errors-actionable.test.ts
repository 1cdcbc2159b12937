import { type Server, type Socket, createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { Stack, authed, uploadLocalFile } from "../../scripts/lib/local-stack";
import { submitTask, waitForEnd } from "./helpers";

/** A name under .invalid never resolves (RFC 6761); allow-listed so that DNS itself is what fails. */
const UNRESOLVABLE = "no-such-host.invalid";
/** workerd's own words for a failed fetch, which must never reach a caller. */
const RUNTIME_WORDS = /internal error|reference =|Network connection lost|jsg|kj::/i;

let stack: Stack;
let key: string;
const servers: Server[] = [];

beforeAll(async () => {
  stack = await Stack.start({ edgeVars: { DEV_FETCH_ALLOW_HOSTS: `127.0.0.1,${UNRESOLVABLE}` } });
  ({ key } = await stack.createUser());
}, 120_000);

afterAll(async () => {
  for (const server of servers) server.close();
  await stack?.stop();
});

/** A raw TCP server on 127.0.0.1 that answers each connection's first bytes with `onRequest`. */
async function tcpServer(onRequest: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    socket.on("error", () => {});
    socket.once("data", () => onRequest(socket));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as { port: number }).port;
}

/** A port nothing listens on: taken from the system, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function urlUpload(url: string): Promise<{ status: number; problem: Record<string, unknown>; text: string }> {
  const response = await stack.fetch("/api/upload/url", authed(key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url }) }));
  const text = await response.text();
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  return { status: response.status, problem: JSON.parse(text) as Record<string, unknown>, text };
}

describe("a URL upload that cannot reach its URL, on the local stack", () => {
  it("answers a refused connection with 502 URL_UNREACHABLE in our words", async () => {
    const port = await closedPort();
    const { status, problem, text } = await urlUpload(`http://127.0.0.1:${port}/clip.mp4`);
    expect(status).toBe(502);
    expect(problem).toMatchObject({ code: "URL_UNREACHABLE", title: "URL unreachable", detail: `Could not connect to 127.0.0.1:${port}: the connection was refused or closed before an answer.` });
    expect(text).not.toMatch(RUNTIME_WORDS);
  });

  it("answers a name that does not resolve with 502 URL_UNREACHABLE, never workerd's internal error", async () => {
    const { status, problem, text } = await urlUpload(`http://${UNRESOLVABLE}/clip.mp4`);
    expect(status).toBe(502);
    expect(problem).toMatchObject({ code: "URL_UNREACHABLE", title: "URL unreachable", detail: `Could not connect to ${UNRESOLVABLE}: the name does not resolve.` });
    expect(text).not.toMatch(RUNTIME_WORDS);
  });

  it("answers a failed TLS handshake with 502 URL_UNREACHABLE, never workerd's internal error", async () => {
    const port = await tcpServer((socket) => socket.end("HTTP/1.1 400 Bad Request\r\n\r\n"));
    const { status, problem, text } = await urlUpload(`https://127.0.0.1:${port}/clip.mp4`);
    expect(status).toBe(502);
    expect(problem).toMatchObject({ code: "URL_UNREACHABLE", detail: `Could not connect to 127.0.0.1:${port}: the TLS handshake failed (certificate or protocol not accepted).` });
    expect(text).not.toMatch(RUNTIME_WORDS);
  });

  it("answers a connection reset mid-body with 502 URL_UNREACHABLE, saying how far it got", async () => {
    const head = "HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nContent-Length: 1000000\r\n\r\n";
    const port = await tcpServer((socket) => socket.write(`${head}${"x".repeat(5000)}`, () => setTimeout(() => socket.resetAndDestroy(), 50)));
    const { status, problem, text } = await urlUpload(`http://127.0.0.1:${port}/clip.mp4`);
    expect(status).toBe(502);
    expect(problem).toMatchObject({ code: "URL_UNREACHABLE", title: "URL unreachable", detail: expect.stringMatching(new RegExp(`^The connection to 127\\.0\\.0\\.1:${port} broke after \\d+ bytes of the download\\.$`)) });
    expect(text).not.toMatch(RUNTIME_WORDS);
  });

  it("titles a refused host in words, not from its code", async () => {
    const { status, problem } = await urlUpload("http://elsewhere.invalid/clip.mp4");
    expect(status).toBe(400);
    expect(problem).toMatchObject({ code: "URL_HOST_BLOCKED", title: "URL host blocked" });
  });
});

describe("a task ffmpeg fails, on the local stack", () => {
  it("gives ffmpeg's cause as its error and keeps the whole stderr in /logs", async () => {
    const clip = await makeClip(await mediaDir(), "clip.mp4", { seconds: 1, size: "160x120" });
    const { url } = await uploadLocalFile(stack, key, clip);
    const response = await submitTask(stack, key, { command: `ffmpeg -i ${url} -map 0:9 out.mp4` });
    expect(response.status).toBe(201);
    const { task_id } = (await response.json()) as { task_id: string };
    const { task } = await waitForEnd(stack, key, task_id);
    expect(task).toMatchObject({ status: "failed", error_code: "FFMPEG_FAILED", error: "Stream map '0:9' matches no streams. To ignore this, add a trailing '?' to the map." });

    const logs = await stack.fetch(`/v1/tasks/${task_id}/logs`, authed(key));
    expect(logs.status).toBe(200);
    const log = await logs.text();
    expect(log).toMatch(/^Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'input 1':$/m);
    expect(log).toMatch(/^  Stream #0:0.*: Video: h264/m);
    expect(log).toContain("Stream map '0:9' matches no streams.\nTo ignore this, add a trailing '?' to the map.");
  });
});
