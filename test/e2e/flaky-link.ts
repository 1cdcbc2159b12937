import { type Server, type Socket, connect, createServer } from "node:net";

/**
 * A TCP relay on 127.0.0.1 in front of the edge that drops the first connection to carry
 * `cutAfterBytes` from the client, then relays faithfully: a network failure in the middle of
 * a request body, which an HTTP client cannot fake by aborting (on loopback its write buffers
 * drain before the abort lands).
 */
export class FlakyLink {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly sockets: Set<Socket>,
  ) {}

  static async start(target: string, cutAfterBytes: number): Promise<FlakyLink> {
    const { hostname, port } = new URL(target);
    const sockets = new Set<Socket>();
    let cut = false;
    const server = createServer((client) => {
      const upstream = connect(Number(port), hostname);
      sockets.add(client).add(upstream);
      let carried = 0;
      client.on("data", (chunk: Buffer) => {
        carried += chunk.byteLength;
        upstream.write(chunk);
        if (!cut && carried > cutAfterBytes) {
          cut = true;
          client.destroy();
          upstream.destroy();
        }
      });
      upstream.on("data", (chunk: Buffer) => client.write(chunk));
      for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
        from.on("close", () => to.destroy());
        from.on("error", () => to.destroy());
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("the relay has no port");
    return new FlakyLink(server, `http://127.0.0.1:${address.port}`, sockets);
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
