import { DurableObject } from "cloudflare:workers";
import type { TaskFailureCode } from "../../shared/errors";
import type { JobEvent } from "../../shared/schemas/jobs";
import { config } from "../lib/config";
import { outputKey } from "./outputs";
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

export type ClaimResult = { ok: true } | { ok: false; reason: "unknown" | "final" | "dispatched" | "claimed" };

/**
 * One per task: holds its live state and is the single writer of its transitions. End
 * states are written to D1 before they are stored here, so anything that sees an end state
 * here can also find it in D1. Alarms fail tasks whose transcoder went silent.
 */
export class TaskObject extends DurableObject<Env> {
  private queue: Promise<unknown> = Promise.resolve();

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
  }

  private async load(): Promise<LiveState | undefined> {
    return this.ctx.storage.get<LiveState>(STATE_KEY);
  }

  private async save(state: LiveState): Promise<void> {
    await this.ctx.storage.put(STATE_KEY, state);
    await this.schedule(state);
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

export function taskStub(env: Env, taskId: string): DurableObjectStub<TaskObject> {
  return (env.TASKS as unknown as DurableObjectNamespace<TaskObject>).get(env.TASKS.idFromName(taskId));
}
