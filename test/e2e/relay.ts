import { type Server, type Socket, connect, createServer } from "node:net";

/**
 * TCP relays on 127.0.0.1 in front of the edge, for network faults an HTTP client cannot fake
 * (on loopback its write buffers drain before an abort lands). Each relay opens one upstream
 * connection per client and decides what to do with the bytes; `Relay` owns the listening and
 * the teardown.
 */
export class Relay {
  /** Connections accepted so far. */
  connections = 0;
  readonly url: string;
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("the relay has no port");
    this.url = `http://127.0.0.1:${address.port}`;
  }

  /** Starts a relay to `target`; `carry` wires each client to its upstream connection. */
  static async start(target: string, carry: (client: Socket, upstream: Socket) => void): Promise<Relay> {
    const { hostname, port } = new URL(target);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const relay = new Relay(server);
    server.on("connection", (client) => {
      relay.connections++;
      const upstream = connect(Number(port), hostname);
      for (const socket of [client, upstream]) {
        relay.sockets.add(socket);
        socket.on("close", () => relay.sockets.delete(socket));
      }
      carry(client, upstream);
    });
    return relay;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/**
 * Drops the first connection once it has carried `cutAfterBytes` from the client, then relays
 * faithfully: a network failure in the middle of a request body.
 */
export function flakyLink(target: string, cutAfterBytes: number): Promise<Relay> {
  let cut = false;
  return Relay.start(target, (client, upstream) => {
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
}

/**
 * Carries answers at `bytesPerSecond` until `release()`, so a download through it takes long
 * enough to be interrupted on purpose. It passes on what the edge does to a connection: an end
 * as an end (after the bytes already read), a refused or reset connection as a reset.
 */
export async function throttledLink(target: string, bytesPerSecond: number): Promise<Relay & { delivered: number; release: () => void }> {
  let throttled = true;
  const state = { delivered: 0 };
  const relay = await Relay.start(target, (client, upstream) => {
    client.pipe(upstream);
    upstream.on("data", (chunk: Buffer) => {
      state.delivered += chunk.byteLength;
      client.write(chunk);
      if (!throttled) return;
      upstream.pause();
      setTimeout(() => upstream.resume(), (chunk.byteLength / bytesPerSecond) * 1000);
    });
    upstream.on("end", () => client.end());
    upstream.on("error", () => client.resetAndDestroy());
    client.on("error", () => upstream.destroy());
    client.on("close", () => upstream.destroy());
  });
  return Object.defineProperties(relay as Relay & { delivered: number; release: () => void }, {
    /** Bytes carried from the edge to clients so far. */
    delivered: { get: () => state.delivered },
    /** Carries everything at full speed from now on. */
    release: {
      value: () => {
        throttled = false;
      },
    },
  });
}
