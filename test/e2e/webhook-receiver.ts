import { once } from "node:events";
import { type IncomingHttpHeaders, type Server, createServer } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll } from "vitest";

/** What the receiver does with one request: answer a status (a 3xx to `location`), or never answer. */
export type Reply = { status: number; location?: string } | "hang";

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * A real webhook receiver on 127.0.0.1 for end-to-end tests. Each path answers from its own
 * script of replies, in order, then 200 once the script is used up.
 */
export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  private readonly scripts = new Map<string, Reply[]>();
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private port = 0;

  /** A receiver listening before the file's tests and closed after them; use it inside tests only. */
  static forFile(): WebhookReceiver {
    const receiver = new WebhookReceiver();
    beforeAll(async () => {
      await receiver.listen();
    });
    afterAll(async () => {
      await receiver.close();
    });
    return receiver;
  }

  /** Listens on `port`, or on any free one. */
  async listen(port = 0): Promise<this> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const path = request.url ?? "/";
        this.requests.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString("utf8") });
        const reply = this.scripts.get(path)?.shift() ?? { status: 200 };
        if (reply === "hang") return;
        response.writeHead(reply.status, reply.location ? { location: reply.location } : {});
        response.end();
      });
    });
    server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    server.listen(port, "127.0.0.1");
    await once(server, "listening");
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  script(path: string, replies: Reply[]): string {
    this.scripts.set(path, [...replies]);
    return this.url(path);
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  received(path: string): ReceivedRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  /** The requests to `path` once there are `count` of them; throws after `timeoutMs`. */
  async receivedUntil(path: string, count: number, timeoutMs = 30_000): Promise<ReceivedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const requests = this.received(path);
      if (requests.length >= count) return requests;
      if (Date.now() > deadline) throw new Error(`${path} received ${requests.length} of ${count} requests`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async close(): Promise<void> {
    if (!this.server) return;
    // Hanging replies keep sockets open on purpose; close() alone would wait for them.
    for (const socket of this.sockets) socket.destroy();
    this.server.close();
    await once(this.server, "close");
  }
}
