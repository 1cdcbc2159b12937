import { DurableObject } from "cloudflare:workers";
import type { TaskFailureCode } from "../../shared/errors";
import type { JobEvent, TranscodeJob } from "../../shared/schemas/jobs";
import type { DispatchOutcome } from "../dispatch/backend";
import { dispatcherFor } from "../dispatch/dispatcher";
import { type JobSpec, jobFor } from "../dispatch/job";
import { queueJobs } from "../dispatch/jobs-queue";
import { config } from "../lib/config";
import type { WebhookHandover } from "../../shared/schemas/webhooks";
import { handoverFor } from "../webhooks/event";
import { WebhookOutbox } from "../webhooks/outbox";
import { afterTaskEnded, endedTaskRow } from "./end-effects";
import { TaskFanOut } from "./fan-out";
import { verifyStoredOutputs } from "./outputs";
import { findTaskById, markFinished, markRetried, markRunning } from "./repository";
import {
  type CancelResult, type ClaimResult, type LiveState, type Limits, applyEvent, claim, dispatched, dueAction, fail, initialState, isFinal, lostTranscoder, nextCheck, onlyProgressMoved, queued, unreachable, waiting,
} from "./state";

const STATE_KEY = "state";
/** What the task runs, kept from its submission so that a dispatch reads nothing from D1. */
const JOB_KEY = "job";
/**
 * A running task's progress reports come twice a second; its state is written at most this
 * often for them (each write is two billed rows: the state and the alarm). Between writes the
 * latest state is held in memory, where polls and watchers read it; any other change and the
 * alarm write it. An object evicted in between has lost at most this much progress, and its
 * heartbeat deadline runs from at most this much earlier.
 */
const PROGRESS_WRITE_MS = 10_000;

/** `time_limit_seconds`: the task's own limit, reserved against its owner's daily quota at submission. */
type TaskMeta = { task_id: string; user_id: string; created_at: string; time_limit_seconds?: number };

/** What one delivery of the task's job message did: nothing (another has it, or it ended), or the transcoder's answer. */
export type DispatchResult = { kind: "skipped"; reason: Extract<ClaimResult, { ok: false }>["reason"] } | { kind: DispatchOutcome["kind"] };

/**
 * One per task: holds its live state and is the single writer of its transitions, which
 * `./state` decides. End states are written to D1 before they are stored here, so anything
 * that sees an end state here can also find it in D1. The alarm is the task's reconciler:
 * whatever is lost (its queue message, its transcoder, the edge), it queues the job again,
 * starts a lost run again (a bounded number of times) or fails the task with a code.
 */
export class TaskObject extends DurableObject<Env> {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly fanOut = new TaskFanOut(this.ctx, this.env);
  private readonly outbox = new WebhookOutbox(this.ctx.storage);
  /** The state when only progress moved since it was last written (see PROGRESS_WRITE_MS). */
  private held: LiveState | undefined;
  private writtenAt = 0;

  async init(meta: TaskMeta, job?: JobSpec): Promise<void> {
    await this.exclusive(async () => {
      if (await this.load()) return;
      if (job) await this.ctx.storage.put(JOB_KEY, job);
      await this.save(initialState(meta));
    });
  }

  async getState(): Promise<LiveState | undefined> {
    return this.load();
  }

  /** Taken by `dispatch` before it hands the job over, so a redelivered job never runs twice. */
  async claimDispatch(): Promise<ClaimResult> {
    return this.exclusive(async () => {
      const state = await this.load();
      if (!state) return { ok: false, reason: "unknown" } as const;
      const { result, next } = claim(state, Date.now());
      if (next) await this.save(next);
      return result;
    });
  }

  /**
   * One delivery of the task's job message, once the user's line has given it a slot: claims
   * the dispatch (a duplicate delivery finds the claim and does nothing), hands the job to a
   * transcoder and records the answer. The transcoder is called outside the object's lock, so
   * its first reports are never held up behind its own dispatch.
   */
  async dispatch(): Promise<DispatchResult> {
    const claim = await this.claimDispatch();
    if (!claim.ok) return { kind: "skipped", reason: claim.reason };
    const state = (await this.load())!;
    const job = await this.jobSpec(state.task_id);
    if (!job) {
      await this.failTask("INTERNAL", "The task record is missing.");
      return { kind: "rejected" };
    }
    const outcome = await dispatcherFor(this.env).dispatch(withinTimeLimit(await jobFor(this.env, state.task_id, job, claim.run, state.user_id), state));
    switch (outcome.kind) {
      case "accepted":
        await this.markDispatched(outcome.target, claim.run);
        break;
      case "stale":
        // A refusal is never an acceptance: that run ran already, so the task gets a new one.
        await this.loseClaimedRun(`${outcome.detail}.`, claim.run);
        break;
      case "rejected":
        await this.failTask("DISPATCH_FAILED", `The transcoder refused the job: ${outcome.detail}`);
        break;
      case "busy":
        // Capacity, not failure: the task waits in line, woken as soon as a task ends.
        await this.markWaiting(claim.run);
        break;
      case "unreachable":
        await this.markUnreachable(claim.run);
    }
    return { kind: outcome.kind };
  }

  /**
   * Each answer to a dispatch names the run it was for: an answer that arrives after its run was
   * given up and a newer run claimed must not act on the newer claim.
   */
  async markDispatched(target: string, run: number): Promise<void> {
    await this.transition((state) => (isClaimOf(state, run) ? dispatched(state, target, Date.now()) : undefined));
  }

  /** The claimed run cannot start (its transcoder already ran it): it is lost, and the task starts again. */
  private async loseClaimedRun(reason: string, run: number): Promise<void> {
    await this.exclusive(async () => {
      const state = await this.load();
      if (state && !isFinal(state.status) && isClaimOf(state, run)) await this.loseRun(state, reason, Date.now());
    });
  }

  /** The task waits in a line, which queues its job again when its turn comes (a dispatch's answer names its run; the line's refusal of a queued job needs none). */
  async markWaiting(run?: number): Promise<void> {
    await this.transition((state) => ((run === undefined || state.retries === run) && (state.dispatch === "claimed" || state.dispatch === "queued") ? waiting(state, Date.now()) : undefined));
  }

  /** No transcoder answered: the alarm queues the job again after a short backoff. */
  async markUnreachable(run: number): Promise<void> {
    await this.transition((state) => (isClaimOf(state, run) ? unreachable(state, Date.now()) : undefined));
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
      this.fanOut.close();
      this.held = undefined;
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
    });
  }

  /** A Server-Sent Events stream of the task, returned over RPC; the Worker relays it to the client. */
  async watch(): Promise<ReadableStream<Uint8Array>> {
    return this.fanOut.watch(await this.load());
  }

  /** WebSocket watchers: the upgrade needs fetch(); everything else goes through RPC methods. */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return new Response("Expected a WebSocket upgrade", { status: 426 });
    return this.exclusive(async () => {
      const state = await this.load();
      const response = this.fanOut.upgrade(request, state);
      // The alarm checks the key behind the new socket (TaskFanOut.nextAlarm).
      if (state && !isFinal(state.status)) await this.schedule(state);
      return response;
    });
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

  /**
   * A transcoder's report for run `run` of the task. `cancel` tells it to stop: the task has
   * already ended here, or this run was given up for a newer one.
   */
  async report(event: JobEvent, run = 0, outputsStored = false): Promise<{ ok: boolean; cancel: boolean }> {
    return this.exclusive(async () => {
      const state = await this.load();
      if (!state) return { ok: false, cancel: true };
      if (run !== state.retries) return { ok: true, cancel: true };
      let next = applyEvent(state, event, new Date().toISOString());
      if (!next) return { ok: true, cancel: isFinal(state.status) };
      // `outputsStored`: the callback route checked the edge's receipts for every output.
      if (next.status === "completed" && !outputsStored) next = await verifyStoredOutputs(this.env.FILES, next);
      if (isFinal(next.status)) await this.persistEnd(next);
      else if (next.retries !== state.retries) await this.restart(state, next);
      else {
        if (state.status === "pending") await markRunning(this.env.DB, next.task_id, next.started_at!);
        if (onlyProgressMoved(state, next) && Date.now() - this.writtenAt < PROGRESS_WRITE_MS) this.hold(state, next);
        else await this.save(next);
      }
      return { ok: true, cancel: false };
    });
  }

  /**
   * The cron's check that this task is looked after: its alarm is set, and an object that has
   * lost its state (it should never) starts over from the D1 record and queues the job.
   */
  async reconcile(meta: TaskMeta): Promise<void> {
    await this.exclusive(async () => {
      const state = await this.load();
      if (!state) {
        await this.save(queued(initialState(meta), Date.now()));
        await queueJobs(this.env, [meta]);
      } else if (!isFinal(state.status) && (await this.ctx.storage.getAlarm()) === null) await this.schedule(state);
    });
  }

  override async alarm(): Promise<void> {
    await this.fanOut.closeRevokedWatchers();
    await this.exclusive(async () => {
      const state = await this.load();
      if (!state) return;
      if (isFinal(state.status)) return this.outbox.flush(this.env);
      const now = Date.now();
      const action = dueAction(state, now, this.limits(state));
      switch (action?.kind) {
        case undefined:
          return this.checkAgainLater(state);
        case "fail":
          return this.persistEnd(fail(state, action.code, action.error, new Date(now).toISOString()));
        case "lost":
          return this.loseRun(state, action.reason, now);
        case "probe":
          if (await dispatcherFor(this.env).isRunning(state.task_id, action.target, state.retries)) return this.checkAgainLater(state);
          return this.loseRun(state, "The transcoder running the task went away.", now);
        case "resend":
          await queueJobs(this.env, [state]);
          return this.save(queued(state, now));
      }
    });
  }

  private async loseRun(state: LiveState, reason: string, now: number): Promise<void> {
    const next = lostTranscoder(state, reason, now);
    if (isFinal(next.status)) return this.persistEnd(next);
    await this.restart(state, next);
  }

  /** Starts a lost run again: the old transcoder is told to stop, and the job is queued anew. */
  private async restart(previous: LiveState, next: LiveState): Promise<void> {
    await markRetried(this.env.DB, next.task_id, next.retries);
    await this.save(next);
    if (previous.dispatch_target) this.ctx.waitUntil(dispatcherFor(this.env).cancel(previous.task_id, previous.dispatch_target, previous.retries));
    await queueJobs(this.env, [next]);
  }

  private async transition(change: (state: LiveState) => LiveState | undefined): Promise<void> {
    await this.exclusive(async () => {
      const state = await this.load();
      if (!state || isFinal(state.status)) return;
      const next = change(state);
      if (next) await this.save(next);
    });
  }

  private limits(state: LiveState): Limits {
    const settings = config(this.env);
    return { heartbeatTimeoutMs: settings.heartbeatTimeoutSeconds * 1000, taskTimeoutMs: timeLimitSeconds(state, settings.taskTimeoutSeconds) * 1000 };
  }

  /**
   * Writes the end to D1, then stores it here together with its webhook event (one atomic put:
   * an end stored here always has its event in the outbox), then hands the event over.
   */
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
    const job = await this.jobSpec(state.task_id);
    const handover = job ? handoverFor(this.env, endedTaskRow(state, job), false) : undefined;
    await this.save(state, handover);
    await Promise.all([afterTaskEnded(this.env, state), this.outbox.flush(this.env)]);
  }

  /** The job as submitted; read from D1 only for a task created before the object kept it. */
  private async jobSpec(taskId: string): Promise<JobSpec | undefined> {
    const stored = await this.ctx.storage.get<JobSpec>(JOB_KEY);
    if (stored) return stored;
    const row = await findTaskById(this.env.DB, taskId);
    return row ? { command: row.command, with_metadata: row.with_metadata === 1, webhook_url: row.webhook_url } : undefined;
  }

  private async load(): Promise<LiveState | undefined> {
    return this.held ?? this.ctx.storage.get<LiveState>(STATE_KEY);
  }

  private async save(state: LiveState, outbox?: WebhookHandover): Promise<void> {
    const previous = await this.load();
    this.held = undefined;
    await this.ctx.storage.put({ [STATE_KEY]: state, ...WebhookOutbox.entry(outbox) });
    this.writtenAt = Date.now();
    await this.schedule(state);
    this.fanOut.notify(previous, state);
  }

  /** Nothing due: sets the next alarm, writing a held state on the way. */
  private checkAgainLater(state: LiveState): Promise<void> {
    return this.held ? this.save(state) : this.schedule(state);
  }

  /** Keeps a progress-only change in memory until the next write (see PROGRESS_WRITE_MS). */
  private hold(previous: LiveState, state: LiveState): void {
    this.held = state;
    this.fanOut.notify(previous, state);
  }

  private async schedule(state: LiveState): Promise<void> {
    const now = Date.now();
    const next = this.fanOut.nextAlarm(nextCheck(state, now, this.limits(state)), state, now);
    const at = next ?? (await this.outbox.retryAt(now));
    if (at !== undefined) await this.ctx.storage.setAlarm(at);
    else await this.ctx.storage.deleteAlarm();
  }

  /** Runs mutations one at a time: they await D1 and R2, where other calls could interleave. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined); // the caller sees the failure in `run`; the queue only waits for it to end
    return run;
  }
}

/** The task's own time limit (what its daily quota reserved), never above TASK_TIMEOUT_SECONDS. */
function timeLimitSeconds(state: LiveState, taskTimeoutSeconds: number): number {
  return Math.min(state.time_limit_seconds ?? taskTimeoutSeconds, taskTimeoutSeconds);
}

/** The job stops at the task's own time limit: the transcoder enforces it, so the quota is a bound. */
function withinTimeLimit(job: TranscodeJob, state: LiveState): TranscodeJob {
  return { ...job, timeout_seconds: timeLimitSeconds(state, job.timeout_seconds) };
}

function isClaimOf(state: LiveState, run: number): boolean {
  return state.dispatch === "claimed" && state.retries === run;
}
