import { DurableObject } from "cloudflare:workers";
import type { TaskFailureCode } from "../../shared/errors";
import type { TaskDestination } from "../../shared/schemas/destinations";
import type { JobEvent, TranscodeJob } from "../../shared/schemas/jobs";
import { type DispatchOutcome, dispatcherFor, queueJobs } from "../dispatch/dispatcher";
import { type JobSpec, jobFor } from "../dispatch/job";
import { config } from "../lib/config";
import { log } from "../lib/log";
import { WebhookOutbox } from "../webhooks/handover";
import { type Redelivery, TaskDeliveries, earliest } from "./deliveries";
import { afterTaskEnded } from "./end-effects";
import { TaskFanOut } from "./fan-out";
import { writeCancelNote } from "./logs";
import { endedTaskRecord, handoverFor } from "./webhook-event";
import { ProgressEvents } from "./progress-events";
import { verifyStoredOutputs } from "./outputs";
import { type TaskRow, findTaskById, markFinished, markRetried, markRunning } from "./repository";
import {
  type CancelResult, type ClaimResult, type LiveState, type Limits, applyEvent, claim, dispatched, dueAction, fail, initialState, isFinal, lostTranscoder, queued, unreachable, waiting,
} from "./state";
import { stepsOfRecord } from "./steps";
import { TaskStore } from "./task-store";

/** `time_limit_seconds`: the task's own limit, reserved against its owner's daily quota at submission. */
type TaskMeta = { task_id: string; user_id: string; created_at: string; time_limit_seconds?: number; retry_of?: string };

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
  private readonly deliveries = new TaskDeliveries(this.ctx.storage);
  private readonly progressEvents = new ProgressEvents(this.ctx, () => this.store.job(), () => this.deliveries.plan());
  private readonly store = new TaskStore(this.ctx.storage, this.fanOut, { limits: (state) => this.limits(state), outboxRetryAt: async (now) => earliest(await this.outbox.retryAt(now), await this.deliveries.retryAt()) });

  async init(meta: TaskMeta, job?: JobSpec, destination?: TaskDestination): Promise<void> {
    await this.exclusive(async () => {
      if (await this.store.load()) return;
      if (job) await this.store.keepJob(job);
      if (destination) await this.deliveries.keepPlan(destination);
      await this.store.save(initialState(meta));
    });
  }

  async getState(): Promise<LiveState | undefined> {
    return this.store.load();
  }

  async redeliver(): Promise<Redelivery> {
    return this.exclusive(async () => this.deliveries.redeliver(this.env, await this.store.load()));
  }

  /** Taken by `dispatch` before it hands the job over, so a redelivered job never runs twice. */
  async claimDispatch(): Promise<ClaimResult> {
    return this.exclusive(async () => {
      const state = await this.store.load();
      if (!state) return { ok: false, reason: "unknown" } as const;
      const { result, next } = claim(state, Date.now());
      if (next) await this.store.save(next);
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
    const state = (await this.store.load())!;
    const job = await this.store.job();
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
      const state = await this.store.load();
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
   * The user's cancel: a task that has not ended ends `failed` with CANCELED and keeps a note as
   * its log until ffmpeg's own arrives (./logs.ts); then its transcoder is told to stop, after
   * the answer (the caller waits for no transcoder). Returns the state it is in afterwards, or
   * that it had already ended.
   */
  async cancel(): Promise<CancelResult> {
    return this.exclusive(async () => {
      const state = await this.store.load();
      if (!state || isFinal(state.status)) return { canceled: false, state };
      const next = fail(state, "CANCELED", "The task was canceled at the user's request.", new Date().toISOString());
      await this.persistEnd(next);
      await writeCancelNote(this.env, next.user_id, next);
      if (state.dispatch_target) this.ctx.waitUntil(this.stopTranscoder(state.task_id, state.dispatch_target));
      return { canceled: true, state: next };
    });
  }

  private async stopTranscoder(taskId: string, target: string): Promise<void> {
    await dispatcherFor(this.env).cancel(taskId, target).catch((error: unknown) => {
      // Safe to drop: a transcoder that missed the cancel is told to stop by the answer to its next report.
      log.warn("could not tell the transcoder of a canceled task to stop", { task_id: taskId, error });
    });
  }

  /** Forgets the task entirely (its record and outputs are deleted by the caller). */
  async destroy(): Promise<void> {
    await this.exclusive(async () => {
      this.fanOut.close();
      await this.store.erase();
    });
  }

  /** A Server-Sent Events stream of the task, returned over RPC; the Worker relays it to the client. */
  async watch(): Promise<ReadableStream<Uint8Array>> {
    return this.fanOut.watch(await this.store.load());
  }

  /** WebSocket watchers: the upgrade needs fetch(); everything else goes through RPC methods. */
  override async fetch(request: Request): Promise<Response> {
    if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return new Response("Expected a WebSocket upgrade", { status: 426 });
    return this.exclusive(async () => {
      const state = await this.store.load();
      const response = this.fanOut.upgrade(request, state);
      // The alarm checks the key behind the new socket (TaskFanOut.nextAlarm).
      if (state && !isFinal(state.status)) await this.store.schedule(state);
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
      const state = await this.store.load();
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
      const state = await this.store.load();
      if (!state) return { ok: false, cancel: true };
      if (run !== state.retries) return { ok: true, cancel: true };
      let next = applyEvent(state, event, new Date().toISOString());
      if (!next) return { ok: true, cancel: isFinal(state.status) };
      // `outputsStored`: every output came with the edge's receipt (./reports.ts).
      if (next.status === "completed" && !outputsStored) next = await verifyStoredOutputs(this.env.FILES, next);
      if (isFinal(next.status)) await this.persistEnd(next);
      else if (next.retries !== state.retries) await this.restart(state, next);
      else {
        const started = state.status === "pending" ? await markRunning(this.env.DB, next.task_id, next.started_at!) : undefined;
        await this.store.update(state, next);
        await this.progressEvents.report(this.env, next, started);
      }
      return { ok: true, cancel: false };
    });
  }

  /**
   * The cron's check that this task is looked after: its alarm is set, and an object that has
   * lost its state (it should never) starts over from the D1 record, job and all, and queues the job.
   */
  async reconcile(meta: TaskMeta): Promise<void> {
    await this.exclusive(async () => {
      const state = await this.store.load();
      if (!state) {
        const row = await findTaskById(this.env.DB, meta.task_id);
        if (row) await this.store.keepJob(jobSpecOf(row));
        await this.store.save(queued(initialState(meta), Date.now()));
        await queueJobs(this.env, [meta]);
      } else if (!isFinal(state.status) && (await this.ctx.storage.getAlarm()) === null) await this.store.schedule(state);
    });
  }

  override async alarm(): Promise<void> {
    await this.fanOut.closeRevokedWatchers();
    await this.exclusive(async () => {
      const state = await this.store.load();
      if (!state) return;
      if (isFinal(state.status)) return this.outbox.flush(this.env);
      const now = Date.now();
      const action = dueAction(state, now, this.limits(state));
      switch (action?.kind) {
        case undefined:
          return this.store.checkAgainLater(state);
        case "fail":
          return this.persistEnd(fail(state, action.code, action.error, new Date(now).toISOString()));
        case "lost":
          return this.loseRun(state, action.reason, now);
        case "probe":
          if (await dispatcherFor(this.env).isRunning(state.task_id, action.target, state.retries)) return this.store.checkAgainLater(state);
          return this.loseRun(state, "The transcoder running the task went away.", now);
        case "resend":
          await queueJobs(this.env, [state]);
          return this.store.save(queued(state, now));
      }
    });
    // Outside the lock: a delivery streams a whole output, and polls and reports must not wait for it.
    await this.deliveries.run(this.env, await this.store.load());
  }

  private async loseRun(state: LiveState, reason: string, now: number): Promise<void> {
    const next = lostTranscoder(state, reason, now);
    if (isFinal(next.status)) return this.persistEnd(next);
    await this.restart(state, next);
  }

  /** Starts a lost run again: the old transcoder is told to stop, and the job is queued anew. */
  private async restart(previous: LiveState, next: LiveState): Promise<void> {
    await markRetried(this.env.DB, next.task_id, next.retries);
    await this.store.save(next);
    if (previous.dispatch_target) this.ctx.waitUntil(dispatcherFor(this.env).cancel(previous.task_id, previous.dispatch_target, previous.retries));
    await queueJobs(this.env, [next]);
  }

  private async transition(change: (state: LiveState) => LiveState | undefined): Promise<void> {
    await this.exclusive(async () => {
      const state = await this.store.load();
      if (!state || isFinal(state.status)) return;
      const next = change(state);
      if (next) await this.store.save(next);
    });
  }

  private limits(state: LiveState): Limits {
    const settings = config(this.env);
    return { heartbeatTimeoutMs: settings.heartbeatTimeoutSeconds * 1000, taskTimeoutMs: timeLimitSeconds(state, settings.taskTimeoutSeconds) * 1000 };
  }

  /**
   * Writes the end to D1, then stores it here together with its webhook event (one atomic put:
   * an end stored here always has its event in the outbox), then hands the event over. Outputs
   * for a destination are stored `pending` in the same put, and the alarm delivers them (./deliveries.ts).
   */
  private async persistEnd(ended: LiveState): Promise<void> {
    const { state, entries, plan } = await this.deliveries.atEnd(this.env, ended);
    const endpoints = await markFinished(this.env.DB, state.task_id, {
      status: state.status as "completed" | "failed",
      progress: Math.floor(state.progress),
      outputs: state.outputs,
      error: state.error,
      error_code: state.error_code,
      started_at: state.started_at,
      finished_at: state.finished_at!,
    });
    const job = await this.store.job();
    const handover = job ? handoverFor(this.env, endedTaskRecord(state, job, plan), false, undefined, endpoints) : undefined;
    await this.store.save(state, { ...WebhookOutbox.entry(handover), ...entries });
    await Promise.all([afterTaskEnded(this.env, state), this.outbox.flush(this.env)]);
    await this.deliveries.arm();
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

/** The job of a task as its record keeps it. */
function jobSpecOf(row: TaskRow): JobSpec {
  const steps = stepsOfRecord(row);
  return { command: steps ? steps[0]!.command : row.command, ...(steps ? { steps } : {}), with_metadata: row.with_metadata === 1, webhook_url: row.webhook_url };
}

function isClaimOf(state: LiveState, run: number): boolean {
  return state.dispatch === "claimed" && state.retries === run;
}
