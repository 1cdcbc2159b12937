import { once } from "node:events";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { TestProject } from "vitest/node";
import { HTML_PAGE, ORIGIN_CHUNK, patternBytes } from "../edge/files/origin";

/**
 * vitest globalSetup of the edge project: a real HTTP origin on 127.0.0.1 for the URL-upload
 * tests. It runs in Node because tests inside workerd cannot listen on a socket; the port
 * reaches them through `inject("originPort")`.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    route(request, response).catch(() => response.destroy());
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  project.provide("originPort", (server.address() as AddressInfo).port);
  return async () => {
    // `/hang` and `/stall` keep sockets open on purpose; close() alone would wait for them.
    for (const socket of sockets) socket.destroy();
    server.close();
    await once(server, "close");
  };
}

/** The bytes of padding each `hostile-s3` answer wrote before its client went away. */
const hostileSent: number[] = [];
const hooks = new Map<string, { method?: string; headers: IncomingMessage["headers"]; body: string }[]>();

async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? "/", "http://origin");
  const [, name, arg] = url.pathname.split("/");
  const size = Number(arg);
  switch (name) {
    case "file":
      response.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
      return sendPattern(response, size);
    case "chunked":
      response.writeHead(200, { "content-type": "video/mp4" });
      return sendPattern(response, size);
    case "declared":
      response.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
      // Destroyed only once the first KiB is on the wire, so the client sees headers and a short body.
      response.write(patternBytes(0, 1024), () => response.destroy());
      return;
    case "html":
      response.writeHead(200, { "content-type": "video/mp4", "content-length": String(Buffer.byteLength(HTML_PAGE)) });
      response.end(HTML_PAGE);
      return;
    case "typed": {
      // Answers the base64 ?body= as ?type=, for tests of how a declared type is stored and served.
      const body = Buffer.from(url.searchParams.get("body") ?? "", "base64");
      response.writeHead(200, { "content-type": url.searchParams.get("type") ?? "application/octet-stream", "content-length": String(body.byteLength) });
      response.end(body);
      return;
    }
    case "status":
      response.writeHead(size, { "content-type": "text/plain" });
      response.end(`status ${size}`);
      return;
    case "redirect":
      response.writeHead(302, { location: url.searchParams.get("to") ?? "/" });
      response.end();
      return;
    case "hang":
      return;
    case "trickle": {
      // `size` KiB of the pattern file, 1 KiB every ?every= ms; with ?stop=<k>, nothing more after k KiB (the socket stays open).
      const every = Number(url.searchParams.get("every") ?? 100);
      const stop = Number(url.searchParams.get("stop") ?? Infinity);
      response.writeHead(200, { "content-type": "video/mp4", "content-length": String(size * 1024) });
      for (let sent = 0; sent < Math.min(size, stop) && !response.destroyed; sent++) {
        response.write(patternBytes(sent * 1024, 1024));
        await new Promise((resolve) => setTimeout(resolve, every));
      }
      if (stop >= size) response.end();
      return;
    }
    case "hook": {
      // A webhook receiver: keeps every request under `arg`, answers ?status= (a 3xx points at ?location=).
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      hooks.set(arg!, [...(hooks.get(arg!) ?? []), { method: request.method, headers: request.headers, body: Buffer.concat(chunks).toString("utf8") }]);
      const status = Number(url.searchParams.get("status") ?? 200);
      response.writeHead(status, url.searchParams.has("location") ? { location: url.searchParams.get("location")! } : {});
      response.end();
      return;
    }
    case "hook-log":
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(hooks.get(arg!) ?? []));
      return;
    case "stall":
      response.writeHead(200, { "content-type": "video/mp4", "content-length": String(1024 * 1024) });
      response.write(patternBytes(0, 1024));
      return;
    case "hostile-s3": {
      // A bucket whose server refuses every request with an S3 error carrying control characters, then
      // 64 MiB of padding, written as fast as the client reads; `hostile-s3-log` says how much went out.
      response.writeHead(500, { "content-type": "application/xml" });
      response.write("<Error><Code>AccessDenied\u001b[31m</Code><Message>no\u001b[2J way</Message></Error>");
      const padding = Buffer.alloc(ORIGIN_CHUNK, 32);
      let sent = 0;
      while (sent < 64 * 1024 * 1024 && !response.destroyed) {
        if (!response.write(padding)) await Promise.race([once(response, "drain"), once(response, "close")]);
        sent += padding.byteLength;
      }
      hostileSent.push(sent);
      if (!response.destroyed) response.end();
      return;
    }
    case "hostile-s3-log":
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(hostileSent));
      return;
    default:
      response.writeHead(404);
      response.end();
  }
}

/** Writes the pattern with backpressure, so a large file never sits in the server's memory. */
async function sendPattern(response: ServerResponse, size: number): Promise<void> {
  for (let offset = 0; offset < size && !response.destroyed; offset += ORIGIN_CHUNK) {
    if (!response.write(patternBytes(offset, Math.min(ORIGIN_CHUNK, size - offset)))) await drainedOrClosed(response);
  }
  response.end();
}

function drainedOrClosed(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const settle = () => {
      response.off("drain", settle);
      response.off("close", settle);
      resolve();
    };
    response.on("drain", settle);
    response.on("close", settle);
  });
}
