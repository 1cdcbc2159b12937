import { type Server, type Socket, connect, createServer } from "node:net";

/**
 * A TCP relay on 127.0.0.1 in front of the edge that carries answers at `bytesPerSecond` until
 * `release()`, so a download through it takes long enough to be interrupted on purpose. It
 * passes on what the edge does to a connection: an end as an end (after the bytes already
 * read), a refused or reset connection as a reset.
 */
export class ThrottledLink {
  /** Connections accepted so far. */
  connections = 0;
  /** Bytes carried from the edge to clients so far. */
  delivered = 0;
  private throttled = true;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly sockets: Set<Socket>,
  ) {}

  static async start(target: string, bytesPerSecond: number): Promise<ThrottledLink> {
    const { hostname, port } = new URL(target);
    const sockets = new Set<Socket>();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("the relay has no port");
    const link = new ThrottledLink(server, `http://127.0.0.1:${address.port}`, sockets);
    server.on("connection", (client) => {
      link.connections++;
      const upstream = connect(Number(port), hostname);
      sockets.add(client).add(upstream);
      client.pipe(upstream);
      upstream.on("data", (chunk: Buffer) => {
        link.delivered += chunk.byteLength;
        client.write(chunk);
        if (!link.throttled) return;
        upstream.pause();
        setTimeout(() => upstream.resume(), (chunk.byteLength / bytesPerSecond) * 1000);
      });
      upstream.on("end", () => client.end());
      upstream.on("error", () => client.resetAndDestroy());
      client.on("error", () => upstream.destroy());
      client.on("close", () => upstream.destroy());
      for (const socket of [client, upstream]) socket.on("close", () => sockets.delete(socket));
    });
    return link;
  }

  /** Carries everything at full speed from now on. */
  release(): void {
    this.throttled = false;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
