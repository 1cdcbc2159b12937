import { KEY_RECHECK_MS, liveCredentials } from "../accounts/credentials";
import { presentLive } from "./present";
import { type LiveState, isFinal } from "./state";

/** Comment lines keep idle SSE connections open through proxies and reveal watchers that left. */
const SSE_PING_MS = 15_000;
/** A watcher this far behind is dropped rather than buffered for. */
const MAX_UNREAD_EVENTS = 64;
const encoder = new TextEncoder();
/** Set by the Worker on the upgrade it forwards: the SHA-256 of the API key that opened the socket. */
const WATCHER_KEY_HEADER = "x-ffedge-watcher-key";
/** An application close code (4000–4999) mirroring HTTP 401: the credentials behind the socket are gone. */
const KEY_REVOKED_CLOSE = 4401;

type WatcherAttachment = { keyHash: string };

/**
 * The upgrade request as the task's object gets it: it carries the hash of the API key that
 * opened it (set here, never taken from the client), so the object can close the socket once
 * that key is revoked.
 */
export function watcherUpgrade(request: Request, keyHash: string | undefined): Request {
  const headers = new Headers(request.headers);
  headers.delete(WATCHER_KEY_HEADER);
  if (keyHash) headers.set(WATCHER_KEY_HEADER, keyHash);
  return new Request(request, { headers });
}

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
      // A watcher that has disconnected has nothing left to close, and nobody to tell.
      writer.close().catch(() => {});
      return readable;
    }
    this.watchers.add(writer);
    this.ping ??= setInterval(() => this.broadcastRaw(": ping\n\n"), SSE_PING_MS);
    return readable;
  }

  upgrade(request: Request, state: LiveState | undefined): Response {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    const keyHash = request.headers.get(WATCHER_KEY_HEADER);
    if (keyHash) server.serializeAttachment({ keyHash } satisfies WatcherAttachment);
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

  /**
   * When the task's alarm must next run: `next` (the task's own check), brought forward to the
   * next check of the keys behind open WebSockets. A hibernated object holds no timers, so the
   * alarm is what wakes it for that check, and only while such a socket is open.
   */
  nextAlarm(next: number | undefined, state: LiveState, now: number): number | undefined {
    if (isFinal(state.status) || !this.ctx.getWebSockets().some((socket) => keyHashOf(socket) !== undefined)) return next;
    return Math.min(next ?? Infinity, now + KEY_RECHECK_MS);
  }

  /**
   * Closes every WebSocket whose API key has been revoked (or deleted) since it was opened, as
   * the Worker ends an SSE stream (untilCredentialEnds). One D1 read for all of them; if D1 cannot
   * answer, the sockets stay open until the next check.
   */
  async closeRevokedWatchers(): Promise<void> {
    const sockets = this.ctx.getWebSockets().flatMap((socket) => {
      const keyHash = keyHashOf(socket);
      return keyHash ? [{ socket, keyHash }] : [];
    });
    if (sockets.length === 0) return;
    const hashes = [...new Set(sockets.map((entry) => entry.keyHash))];
    const live = await liveCredentials(this.env.DB, hashes);
    for (const { socket, keyHash } of sockets) {
      if (live.has(keyHash)) continue;
      try {
        socket.close(KEY_REVOKED_CLOSE, "API key revoked");
      } catch {
        // Already closing.
      }
    }
  }

  close(): void {
    // Watchers that disconnected already have nothing left to close.
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
    writer.write(encoder.encode(text)).catch(() => this.dropWatcher(writer)); // a write that fails: the connection is gone
  }

  private dropWatcher(writer: WritableStreamDefaultWriter<Uint8Array>): void {
    this.watchers.delete(writer);
    // Dropped either way: a watcher that disconnected has nothing left to abort.
    writer.abort().catch(() => {});
    if (this.watchers.size === 0 && this.ping) {
      clearInterval(this.ping);
      this.ping = undefined;
    }
  }
}

/** The key behind an open socket; undefined once it is closing, or when no key opened it. */
function keyHashOf(socket: WebSocket): string | undefined {
  if (socket.readyState !== WebSocket.OPEN) return undefined;
  return (socket.deserializeAttachment() as WatcherAttachment | null)?.keyHash;
}
