import { DurableObject } from "cloudflare:workers";
import type { TaskFailureCode } from "../../shared/errors";
import type { JobEvent } from "../../shared/schemas/jobs";
import { accountStub, poolStub } from "../lib/stubs";
import { enqueueTaskEnded } from "../webhooks/enqueue";
import { config } from "../lib/config";
import { outputKey } from "./outputs";
import { presentLive } from "./present";
import { markFinished, markRunning } from "./repository";
import { type LiveState, applyEvent, fail, initialState, isFinal } from "./state";

const STATE_KEY = "state";
/** How long a dispatch claim holds before another delivery of the job may try again. */
const DISPATCH_LEASE_MS = 60_000;
/** A dispatched job that has not started by then is considered lost (covers container cold starts). */
const START_DEADLINE_MS = 3 * 60_000;
/** A job never dispatched by then (its queue message went to the dead-letter queue) fails. */
const PENDING_DEADLINE_MS = 60 * 60_000;
/** Extra time beyond the task's own timeout before the edge gives up on the transcoder. */
const TIMEOUT_GRACE_MS = 2 * 60_000;
/** Comment lines keep idle SSE connections open through proxies and reveal watchers that left. */
const SSE_PING_MS = 15_000;
/** A watcher this far behind is dropped rather than buffered for. */
const MAX_UNREAD_EVENTS = 64;
const encoder = new TextEncoder();

export type CancelResult = { canceled: boolean; target: string | null; state: LiveState | undefined };
export type ClaimResult = { ok: true } | { ok: false; reason: "unknown" | "final" | "dispatched" | "claimed" };

/**
 * One per task: holds its live state and is the single writer of its transitions. End
 * states are written to D1 before they are stored here, so anything that sees an end state
 * here can also find it in D1. Alarms fail tasks whose transcoder went silent.
 */
export class TaskObject extends DurableObject<Env> {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly watchers = new Set<WritableStreamDefaultWriter<Uint8Array>>();
  private ping: ReturnType<typeof setInterval> | undefined;

  async init(meta: { task_id: string; user_id: string; created_at: string }): Promise<void> {
    await this.exclusive(async () => {
      if (await this.load()) return;
      await this.save(initialState(meta));
    });
  }

  async getState(): Promise<LiveState | undefined> {
    return this.load();
  }

  /** Taken by the queue consumer before it dispatches, so a redelivered job never runs twice. */
  async claimDispatch(): Promise<ClaimResult> {
    return this.exclusive(async () => {
      const state = await this.load();
      if (!state) return { ok: false, reason: "unknown" } as const;
      if (isFinal(state.status)) return { ok: false, reason: "final" } as const;
      if (state.dispatch === "dispatched") return { ok: false, reason: "dispatched" } as const;
      if (state.dispatch === "claimed" && Date.now() - Date.parse(state.dispatch_claimed_at!) < DISPATCH_LEASE_MS) {
        return { ok: false, reason: "claimed" } as const;
      }
      await this.save({ ...state, dispatch: "claimed", dispatch_claimed_at: new Date().toISOString() });
      return { ok: true } as const;
    });
  }

  async markDispatched(target: string): Promise<void> {
    await this.exclusive(async () => {
      const state = await this.load();
      if (!state || isFinal(state.status)) return;
      await this.save({ ...state, dispatch: "dispatched", dispatch_target: target, dispatched_at: new Date().toISOString() });
    });
  }

  async releaseDispatch(): Promise<void> {
    await this.exclusive(async () => {
      const state = await this.load();
      if (!state || isFinal(state.status) || state.dispatch !== "claimed") return;
      await this.save({ ...state, dispatch: "none", dispatch_claimed_at: null });
    });
  }

  /**
   * The user's cancel: a task that has not ended ends `failed` with CANCELED. Returns where
   * it had been dispatched, so the caller can stop the transcoder, or that it had already ended.
   */
  async cancel(): Promise<CancelResult> {
    return this.exclusive(async () => {
      const state = await this.load();
      if (!state || isFinal(state.status)) return { canceled: false, target: null, state };
      const next = fail(state, "CANCELED", "The task was canceled at the user's request.", new Date().toISOString());
      await this.persistEnd(next);
      return { canceled: true, target: state.dispatch_target, state: next };
    });
  }

  /** Forgets the task entirely (its record and outputs are deleted by the caller). */
  async destroy(): Promise<void> {
    await this.exclusive(async () => {
      this.closeWatchers();
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
    });
  }

  /**
   * A Server-Sent Events stream: the current state first, then every change, then the final
   * state, then the end of the stream. Returned over RPC; the Worker relays it to the client.
   */
  async watch(): Promise<ReadableStream<Uint8Array>> {
    const state = await this.load();
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

  /**
   * WebSocket watchers use the hibernation API, so an idle task with watchers can be evicted
   * from memory. The upgrade needs fetch(); everything else goes through RPC methods.
   * https://developers.cloudflare.com/durable-objects/best-practices/websockets/
   */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return new Response("Expected a WebSocket upgrade", { status: 426 });
    const state = await this.load();
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    if (state) server.send(JSON.stringify({ event: "status", data: presentLive(this.env, state) }));
    if (!state || isFinal(state.status)) server.close(1000, "task ended");
    return new Response(null, { status: 101, webSocket: client });
  }

  override async webSocketMessage(): Promise<void> {
    // Watchers only listen; anything they send is ignored.
  }

  override async webSocketClose(socket: WebSocket, code: number): Promise<void> {
    socket.close(code === 1005 ? 1000 : code, "closing");
  }

  /** Ends a task that has not ended yet. Returns the state it is in afterwards. */
  async failTask(code: TaskFailureCode, error: string): Promise<LiveState | undefined> {
    return this.exclusive(async () => {
      const state = await this.load();
      if (!state || isFinal(state.status)) return state;
      const next = fail(state, code, error, new Date().toISOString());
      await this.persistEnd(next);
      return next;
    });
  }

  /** A transcoder's report. `cancel` tells it to stop: the task has already ended here. */
  async report(event: JobEvent): Promise<{ ok: boolean; cancel: boolean }> {
    return this.exclusive(async () => {
      const state = await this.load();
      if (!state) return { ok: false, cancel: true };
      let next = applyEvent(state, event, new Date().toISOString());
      if (!next) return { ok: true, cancel: isFinal(state.status) };
      if (next.status === "completed") next = await this.verifyOutputs(next);
      if (isFinal(next.status)) await this.persistEnd(next);
      else {
        if (state.status === "pending") await markRunning(this.env.DB, next.task_id, next.started_at!);
        await this.save(next);
      }
      return { ok: true, cancel: false };
    });
  }

  override async alarm(): Promise<void> {
    await this.exclusive(async () => {
      const state = await this.load();
      if (!state || isFinal(state.status)) return;
      const overdue = this.overdue(state, Date.now());
      if (overdue) await this.persistEnd(fail(state, overdue.code, overdue.error, new Date().toISOString()));
      else await this.schedule(state);
    });
  }

  private overdue(state: LiveState, now: number): { code: TaskFailureCode; error: string } | undefined {
    const limits = this.limits();
    if (state.status === "running") {
      if (now - Date.parse(state.heartbeat_at ?? state.started_at!) > limits.heartbeatTimeoutMs) {
        return { code: "TRANSCODER_LOST", error: `The transcoder stopped reporting for more than ${limits.heartbeatTimeoutMs / 1000} s; the task was abandoned.` };
      }
      if (now - Date.parse(state.started_at!) > limits.taskTimeoutMs + TIMEOUT_GRACE_MS) {
        return { code: "TIMEOUT", error: `The task ran longer than its limit of ${limits.taskTimeoutMs / 1000} s.` };
      }
      return undefined;
    }
    if (state.dispatch === "dispatched" && now - Date.parse(state.dispatched_at!) > START_DEADLINE_MS) {
      return { code: "TRANSCODER_LOST", error: "The transcoder accepted the job but never started it." };
    }
    if (now - Date.parse(state.created_at) > PENDING_DEADLINE_MS) {
      return { code: "DISPATCH_FAILED", error: "No transcoder could take the task." };
    }
    return undefined;
  }

  private nextDeadline(state: LiveState): number | undefined {
    if (isFinal(state.status)) return undefined;
    const limits = this.limits();
    if (state.status === "running") {
      return Math.min(Date.parse(state.heartbeat_at ?? state.started_at!) + limits.heartbeatTimeoutMs, Date.parse(state.started_at!) + limits.taskTimeoutMs + TIMEOUT_GRACE_MS) + 1;
    }
    if (state.dispatch === "dispatched") return Date.parse(state.dispatched_at!) + START_DEADLINE_MS + 1;
    return Date.parse(state.created_at) + PENDING_DEADLINE_MS + 1;
  }

  private limits() {
    const settings = config(this.env);
    return { heartbeatTimeoutMs: settings.heartbeatTimeoutSeconds * 1000, taskTimeoutMs: settings.taskTimeoutSeconds * 1000 };
  }

  /** Outputs count only once they are really in R2 with the size the transcoder reported. */
  private async verifyOutputs(state: LiveState): Promise<LiveState> {
    for (const output of state.outputs ?? []) {
      const head = await this.env.FILES.head(outputKey(state.user_id, state.task_id, output.filename));
      if (!head || head.size !== output.size) {
        return fail({ ...state, progress: 99, outputs: null }, "OUTPUT_UPLOAD_FAILED", `Output '${output.filename}' was reported but is not stored.`, state.finished_at!);
      }
    }
    return state;
  }

  private async persistEnd(state: LiveState): Promise<void> {
    await markFinished(this.env.DB, state.task_id, {
      status: state.status as "completed" | "failed",
      progress: Math.floor(state.progress),
      outputs: state.outputs,
      error: state.error,
      error_code: state.error_code,
      started_at: state.started_at,
      finished_at: state.finished_at!,
    });
    await this.save(state);
    // Slots are freed after the end state is durable; if this fails, the objects' alarms catch up.
    const released = await Promise.allSettled([accountStub(this.env, state.user_id).release(state.task_id), poolStub(this.env).released()]);
    for (const result of released) {
      if (result.status === "rejected") console.error(JSON.stringify({ msg: "could not release a slot", task_id: state.task_id, error: String(result.reason) }));
    }
    // Only queues the webhook event (D1 already holds the end state); never throws.
    await enqueueTaskEnded(this.env, state.task_id);
  }

  private async load(): Promise<LiveState | undefined> {
    return this.ctx.storage.get<LiveState>(STATE_KEY);
  }

  private async save(state: LiveState): Promise<void> {
    const previous = await this.load();
    await this.ctx.storage.put(STATE_KEY, state);
    await this.schedule(state);
    this.notify(previous, state);
  }

  /** Tells every watcher about a change they can see: a new status or a new whole percent. */
  private notify(previous: LiveState | undefined, state: LiveState): void {
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
    if (isFinal(state.status)) this.closeWatchers();
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

  private closeWatchers(): void {
    for (const writer of this.watchers) writer.close().catch(() => {});
    this.watchers.clear();
    if (this.ping) clearInterval(this.ping);
    this.ping = undefined;
  }

  private async schedule(state: LiveState): Promise<void> {
    const deadline = this.nextDeadline(state);
    if (deadline === undefined) await this.ctx.storage.deleteAlarm();
    else await this.ctx.storage.setAlarm(deadline);
  }

  /** Runs mutations one at a time: they await D1 and R2, where other calls could interleave. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
