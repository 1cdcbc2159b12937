import { presentLive } from "./present";
import { type LiveState, isFinal } from "./state";

/** Comment lines keep idle SSE connections open through proxies and reveal watchers that left. */
const SSE_PING_MS = 15_000;
/** A watcher this far behind is dropped rather than buffered for. */
const MAX_UNREAD_EVENTS = 64;
const encoder = new TextEncoder();

/**
 * A task's live watchers: Server-Sent Events streams held in memory, and WebSockets on the
 * hibernation API (so an idle task with watchers can be evicted from memory).
 * https://developers.cloudflare.com/durable-objects/best-practices/websockets/
 */
export class TaskFanOut {
  private readonly watchers = new Set<WritableStreamDefaultWriter<Uint8Array>>();
  private ping: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly ctx: DurableObjectState, private readonly env: Env) {}

  /** The current state first, then every change, then the final state and the end of the stream. */
  watch(state: LiveState | undefined): ReadableStream<Uint8Array> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
    const writer = writable.getWriter();
    if (state) this.sendTo(writer, "status", presentLive(this.env, state));
    if (!state || isFinal(state.status)) {
      writer.close().catch(() => {});
      return readable;
    }
    this.watchers.add(writer);
    this.ping ??= setInterval(() => this.broadcastRaw(": ping\n\n"), SSE_PING_MS);
    return readable;
  }

  upgrade(state: LiveState | undefined): Response {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    if (state) server.send(JSON.stringify({ event: "status", data: presentLive(this.env, state) }));
    if (!state || isFinal(state.status)) server.close(1000, "task ended");
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Tells every watcher about a change they can see: a new status or a new whole percent. */
  notify(previous: LiveState | undefined, state: LiveState): void {
    const statusChanged = previous?.status !== state.status;
    if (!statusChanged && Math.floor(previous.progress) === Math.floor(state.progress)) return;
    const event = isFinal(state.status) ? state.status : statusChanged ? "status" : "progress";
    const data = presentLive(this.env, state);
    for (const writer of this.watchers) this.sendTo(writer, event, data);
    for (const socket of this.ctx.getWebSockets()) {
      try {
        socket.send(JSON.stringify({ event, data }));
        if (isFinal(state.status)) socket.close(1000, "task ended");
      } catch {
        // A socket that went away is dropped by the runtime.
      }
    }
    if (isFinal(state.status)) this.close();
  }

  close(): void {
    for (const writer of this.watchers) writer.close().catch(() => {});
    this.watchers.clear();
    if (this.ping) clearInterval(this.ping);
    this.ping = undefined;
  }

  private sendTo(writer: WritableStreamDefaultWriter<Uint8Array>, event: string, data: unknown): void {
    this.write(writer, `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  private broadcastRaw(text: string): void {
    for (const writer of this.watchers) this.write(writer, text);
  }

  // Writes are not awaited: a slow watcher must not hold up the task. One that falls far
  // behind, or whose connection is gone, is dropped.
  private write(writer: WritableStreamDefaultWriter<Uint8Array>, text: string): void {
    if ((writer.desiredSize ?? 0) < -MAX_UNREAD_EVENTS) return this.dropWatcher(writer);
    writer.write(encoder.encode(text)).catch(() => this.dropWatcher(writer));
  }

  private dropWatcher(writer: WritableStreamDefaultWriter<Uint8Array>): void {
    this.watchers.delete(writer);
    writer.abort().catch(() => {});
    if (this.watchers.size === 0 && this.ping) {
      clearInterval(this.ping);
      this.ping = undefined;
    }
  }
}
