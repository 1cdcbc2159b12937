import type { TaskDestination } from "../../shared/schemas/destinations";
import type { JobSpec } from "../dispatch/job";
import { log } from "../lib/log";
import { type OwnerEndpoints, endpointsFor, listOwnerEndpoints } from "../webhooks/endpoints";
import { handOverProgress } from "../webhooks/handover";
import type { LiveState } from "./state";
import { progressEvent } from "./webhook-event";

/** A progress event goes out once progress has risen this many points since the last one... */
const PROGRESS_STEP_POINTS = 10;
/** ...or once this long has passed since the last one, if progress has risen at all. */
const PROGRESS_STEP_MS = 10_000;
/** The owner's endpoints as the task last read them count as current this long (then a read in the background). */
const ENDPOINTS_FRESH_MS = 60_000;

/** Storage keys in the task's object (tests read them too). */
export const ENDPOINTS_KEY = "progress-endpoints";
export const SENT_KEY = "progress-sent";

interface KnownEndpoints {
  endpoints: OwnerEndpoints;
  read_at: number;
}

/** The last progress event sent: its number (counting across runs), its run, its progress and when. */
export interface LastSent {
  seq: number;
  run: number;
  progress: number;
  at: number;
}

/**
 * Whether a running task's report at `progress` (whole points) makes a progress event now: the
 * first one of a run once progress is above 0, then one per PROGRESS_STEP_POINTS points or per
 * PROGRESS_STEP_MS, whichever comes first, and never twice at the same progress.
 */
export function progressEventDue(last: LastSent | undefined, run: number, progress: number, now: number): boolean {
  if (progress <= 0) return false;
  if (!last || last.run !== run) return true;
  if (progress <= last.progress) return false;
  return progress - last.progress >= PROGRESS_STEP_POINTS || now - last.at >= PROGRESS_STEP_MS;
}

/**
 * A running task's `task.progress` events for its owner's endpoints subscribed to them, decided
 * in the task's object from its own storage: the endpoints come from the statement that marked
 * the task running (no query of their own), are read again in the background at most once a
 * minute while the owner has any, and are never read for an owner who had none when the task
 * started. A report that makes an event hands it to the endpoints' objects after the report's
 * answer (waitUntil), which send it once (edge/webhooks/progress-slots.ts).
 */
export class ProgressEvents {
  private refreshing = false;

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly job: () => Promise<JobSpec | undefined>,
    private readonly destination: () => Promise<TaskDestination | undefined>,
  ) {}

  /** After a running task's report; `started` is what marking it running read, on its first report of a run. */
  async report(env: Env, state: LiveState, started?: OwnerEndpoints, now = Date.now()): Promise<void> {
    if (state.status !== "running") return;
    let known = await this.ctx.storage.get<KnownEndpoints>(ENDPOINTS_KEY);
    if (started) await this.ctx.storage.put(ENDPOINTS_KEY, (known = { endpoints: started, read_at: now }));
    if (!known || (known.endpoints.length > 0 && now - known.read_at >= ENDPOINTS_FRESH_MS)) this.refresh(env, state.user_id);
    const subscribed = known ? endpointsFor(known.endpoints, "task.progress") : [];
    if (subscribed.length === 0) return;
    const progress = Math.min(99, Math.floor(state.progress));
    const last = await this.ctx.storage.get<LastSent>(SENT_KEY);
    if (!progressEventDue(last, state.retries, progress, now)) return;
    const job = await this.job();
    if (!job) return;
    const seq = (last?.seq ?? 0) + 1;
    await this.ctx.storage.put(SENT_KEY, { seq, run: state.retries, progress, at: now } satisfies LastSent);
    const event = progressEvent(env, state, job, seq, await this.destination());
    this.ctx.waitUntil(handOverProgress(env, subscribed, { task_id: state.task_id, seq, event }).catch((error: unknown) => log.warn("progress hand-over failed; the next one supersedes it", { task_id: state.task_id, error })));
  }

  /** Reads the owner's endpoints again, after the report's answer. */
  private refresh(env: Env, userId: string): void {
    if (this.refreshing) return;
    this.refreshing = true;
    const read = listOwnerEndpoints(env.DB, userId)
      .then((endpoints) => this.ctx.storage.put(ENDPOINTS_KEY, { endpoints, read_at: Date.now() } satisfies KnownEndpoints))
      .catch((error: unknown) => log.warn("could not read the owner's webhook endpoints", { user_id: userId, error }))
      .finally(() => (this.refreshing = false));
    this.ctx.waitUntil(read);
  }
}
