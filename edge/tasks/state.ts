import type { TaskFailureCode } from "../../shared/errors";
import type { JobEvent } from "../../shared/schemas/jobs";
import type { TaskStatus } from "../../shared/schemas/tasks";

export type StoredOutput = Extract<JobEvent, { type: "completed" }>["outputs"][number];

/**
 * Where the task's job is on its way to a transcoder:
 * - `queued`: a job message is (or should be) in the queue; if nothing moves by `resend_at`,
 *   the message is taken as lost and sent again.
 * - `claimed`: a consumer is dispatching it right now (a lease, so a crashed consumer frees it).
 * - `waiting`: in the dispatch line, which sends the message when a slot frees up.
 * - `dispatched`: a transcoder accepted it.
 */
export type DispatchStage = "queued" | "claimed" | "waiting" | "dispatched";

/** A task's live state, held by its Durable Object. */
export interface LiveState {
  task_id: string;
  user_id: string;
  /** A retry's: the finished task it runs again (shown as GET shows it, in its events too). */
  retry_of?: string;
  status: TaskStatus;
  /** 0–100, fractional while running. */
  progress: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Highest report sequence number applied for the current run. */
  last_seq: number;
  heartbeat_at: string | null;
  dispatch: DispatchStage;
  /** When the stage started (the claim, the wait, the dispatch). */
  dispatch_at: string;
  /** When the alarm queues the job again if it is still `queued` or `waiting`. */
  resend_at: string;
  dispatch_target: string | null;
  /** Dispatch attempts in a row that found no transcoder; sets the backoff. */
  unreachable: number;
  /** When the first of those attempts was made. */
  unreachable_since: string | null;
  /** The task's own time limit, reserved against its owner's daily quota (absent: TASK_TIMEOUT_SECONDS). */
  time_limit_seconds?: number;
  /** Runs started again after their transcoder was lost. Each run's reports carry its number. */
  retries: number;
  /** Of those, runs a transcoder handed back unfinished as it shut down: they spend no retry. */
  handed_back?: number;
  outputs: StoredOutput[] | null;
  error: string | null;
  error_code: TaskFailureCode | null;
  /** Chained tasks: the step the run last reported (running, or the one it failed at), and that step's own 0–100. */
  step?: number;
  step_progress?: number;
}

export interface Limits {
  heartbeatTimeoutMs: number;
  taskTimeoutMs: number;
}

/** A queued message not taken by then is considered lost. */
export const QUEUED_RESEND_MS = 30_000;
/** The line wakes waiting tasks itself; this only covers a wake-up that was lost. */
export const WAITING_RESEND_MS = 60_000;
/** How long a consumer's claim holds before another delivery may dispatch the task. */
export const CLAIM_LEASE_MS = 60_000;
/** Longest pause between dispatch attempts while no transcoder answers: short, so a transcoder that comes back gets the task at once. */
export const MAX_UNREACHABLE_BACKOFF_MS = 5_000;
/** A dispatched job that has not started by then is considered lost (covers container cold starts). */
export const START_DEADLINE_MS = 3 * 60_000;
/** A first dispatch that finds no transcoder for this long fails DISPATCH_FAILED. */
export const UNREACHABLE_DEADLINE_MS = 5 * 60_000;
/** A task never dispatched by then fails: no transcoder could take it. */
export const PENDING_DEADLINE_MS = 60 * 60_000;
/** Extra time beyond the task's own timeout before the edge gives up on the transcoder. */
export const TIMEOUT_GRACE_MS = 2 * 60_000;
/** A run that has not reported for this long is checked on (transcoders report every 10 s). */
export const PROBE_AFTER_MS = 15_000;
export const PROBE_EVERY_MS = 5_000;
/** A task whose transcoder was lost is started again at most this many times, then fails TRANSCODER_LOST. */
export const MAX_RETRIES = 2;
/** Hand-backs beyond this many (transcoders that keep shutting down under the task) count as losses. */
export const MAX_HANDBACKS = 5;
/**
 * A silent run whose transcoder still answers for it (its work is done and its end waits for
 * the edge, say after an edge outage) is waited for this long past the heartbeat timeout: as
 * long as a transcoder retries a finished job's end (EDGE_RETRY_SECONDS).
 */
export const ENDING_WINDOW_MS = 10 * 60_000;

export const isFinal = (status: TaskStatus) => status === "completed" || status === "failed";

const at = (time: number) => new Date(time).toISOString();

export function initialState(meta: { task_id: string; user_id: string; created_at: string; time_limit_seconds?: number; retry_of?: string }): LiveState {
  return {
    ...meta, status: "pending", progress: 0, started_at: null, finished_at: null, last_seq: -1, heartbeat_at: null,
    dispatch: "queued", dispatch_at: meta.created_at, resend_at: at(Date.parse(meta.created_at) + QUEUED_RESEND_MS),
    dispatch_target: null, unreachable: 0, unreachable_since: null, retries: 0, outputs: null, error: null, error_code: null,
  };
}

export type CancelResult = { canceled: boolean; state: LiveState | undefined };

export type ClaimResult = { ok: true; run: number } | { ok: false; reason: "unknown" | "final" | "dispatched" | "claimed" };

/** A consumer's claim on dispatching the task, so a duplicated message never runs it twice. */
export function claim(state: LiveState, now: number): { result: ClaimResult; next?: LiveState } {
  if (isFinal(state.status)) return { result: { ok: false, reason: "final" } };
  if (state.dispatch === "dispatched") return { result: { ok: false, reason: "dispatched" } };
  if (state.dispatch === "claimed" && now - Date.parse(state.dispatch_at) < CLAIM_LEASE_MS) return { result: { ok: false, reason: "claimed" } };
  return { result: { ok: true, run: state.retries }, next: { ...state, dispatch: "claimed", dispatch_at: at(now) } };
}

export function dispatched(state: LiveState, target: string, now: number): LiveState {
  return { ...state, dispatch: "dispatched", dispatch_at: at(now), dispatch_target: target, unreachable: 0, unreachable_since: null };
}

/** In a line (the user's cap or transcoder capacity): the line sends the job when its turn comes. */
export function waiting(state: LiveState, now: number): LiveState {
  return { ...state, dispatch: "waiting", dispatch_at: at(now), resend_at: at(now + WAITING_RESEND_MS) };
}

/** No transcoder answered: try again soon, backing off up to a few seconds. */
export function unreachable(state: LiveState, now: number): LiveState {
  const count = state.unreachable + 1;
  const delay = Math.min(MAX_UNREACHABLE_BACKOFF_MS, 1000 * 2 ** (count - 1));
  return { ...state, dispatch: "queued", dispatch_at: at(now), resend_at: at(now + delay), unreachable: count, unreachable_since: state.unreachable_since ?? at(now) };
}

/** The job message was sent (again). */
export function queued(state: LiveState, now: number): LiveState {
  return { ...state, dispatch: "queued", dispatch_at: at(now), resend_at: at(now + QUEUED_RESEND_MS) };
}

/**
 * The run's transcoder is gone: start the task again from the beginning, or fail it once it
 * has been retried MAX_RETRIES times. A run its transcoder `handedBack` (it shut down) does
 * not count, up to MAX_HANDBACKS of them. A hand-back that names its `failCode` (the work
 * space ran out) fails the task with it once those are spent.
 */
export function lostTranscoder(state: LiveState, reason: string, now: number, handedBack = false, failCode?: TaskFailureCode): LiveState {
  const handBacks = state.handed_back ?? 0;
  const free = handedBack && handBacks < MAX_HANDBACKS;
  if (handedBack && !free && failCode) return fail(state, failCode, `${reason} The task was handed back ${handBacks + 1} times; no transcoder had room for it.`, at(now));
  if (!free && state.retries - handBacks >= MAX_RETRIES) {
    return fail(state, "TRANSCODER_LOST", `${reason} The task was tried ${state.retries + 1} times.`, at(now));
  }
  return {
    ...state, status: "pending", progress: 0, started_at: null, last_seq: -1, heartbeat_at: null,
    dispatch: "queued", dispatch_at: at(now), resend_at: at(now + QUEUED_RESEND_MS), dispatch_target: null, unreachable: 0, unreachable_since: null, retries: state.retries + 1,
    ...(state.step === undefined ? {} : { step: 0, step_progress: 0 }),
    ...(free ? { handed_back: handBacks + 1 } : {}),
  };
}

/**
 * The only transitions a task makes: pending → running → completed | failed, pending →
 * failed, and running → pending when its transcoder is lost (`lostTranscoder`). Reports are
 * applied in `seq` order; duplicates and stale ones change nothing, and nothing leaves an end
 * state. Returns undefined when the event is ignored. A transcoder that reports its own loss
 * (it shut down mid-job) gets the task retried like a crash.
 */
export function applyEvent(state: LiveState, event: JobEvent, now: string): LiveState | undefined {
  if (isFinal(state.status) || event.seq <= state.last_seq) return undefined;
  const next: LiveState = { ...state, last_seq: event.seq, heartbeat_at: now };
  switch (event.type) {
    case "started":
      return state.status === "pending" ? { ...next, status: "running", started_at: startOf(state, now) } : next;
    case "progress":
      return {
        ...next,
        status: "running",
        started_at: startOf(state, now),
        // Shown below 100 until the outputs are really stored.
        progress: Math.max(state.progress, Math.min(event.progress, 99)),
        ...(event.step === undefined ? {} : { step: event.step, step_progress: event.step_progress ?? 0 }),
      };
    case "completed":
      return { ...next, status: "completed", progress: 100, started_at: startOf(state, now), finished_at: now, outputs: event.outputs };
    case "failed":
      if (event.error_code === "TRANSCODER_LOST") return lostTranscoder(next, event.error, Date.parse(now));
      return fail({ ...next, started_at: startOf(state, now), ...(event.step === undefined ? {} : { step: event.step }) }, event.error_code, event.error, now);
    case "handed_back":
      return lostTranscoder(next, event.reason, Date.parse(now), true, event.error_code);
  }
}

/**
 * When the run began: a transcoder sends its first report only after a second, and a shorter
 * job its terminal report alone (transcoder/jobs/reporter.ts), so the start is the job's
 * hand-over, which usage counts from.
 */
function startOf(state: LiveState, now: string): string {
  if (state.started_at) return state.started_at;
  return state.dispatch === "claimed" || state.dispatch === "dispatched" ? state.dispatch_at : now;
}

/**
 * Whether `next` differs from `state` only as a running task's progress report moves it (its
 * percent, sequence number and heartbeat): a change the task's object may keep in memory for a
 * while instead of writing it at once.
 */
export function onlyProgressMoved(state: LiveState, next: LiveState): boolean {
  if (state.status !== "running" || next.status !== "running") return false;
  const rest = ({ progress: _p, last_seq: _s, heartbeat_at: _h, step_progress: _sp, ...others }: LiveState) => others;
  const [a, b] = [rest(state), rest(next)];
  return (Object.keys(a) as (keyof typeof a)[]).every((key) => JSON.stringify(a[key]) === JSON.stringify(b[key]));
}

export function fail(state: LiveState, code: TaskFailureCode, error: string, now: string): LiveState {
  return { ...state, status: "failed", finished_at: now, error, error_code: code };
}

/** What the task's alarm has to do now, if anything. */
export type DueAction =
  | { kind: "fail"; code: TaskFailureCode; error: string }
  | { kind: "lost"; reason: string }
  | { kind: "probe"; target: string }
  | { kind: "resend" };

export function dueAction(state: LiveState, now: number, limits: Limits): DueAction | undefined {
  if (isFinal(state.status)) return undefined;
  if (state.status === "running") {
    const lastReport = Date.parse(state.heartbeat_at ?? state.started_at!);
    if (now - Date.parse(state.started_at!) > limits.taskTimeoutMs + TIMEOUT_GRACE_MS) {
      return { kind: "fail", code: "TIMEOUT", error: `The task ran longer than its limit of ${limits.taskTimeoutMs / 1000} s.` };
    }
    // Past the heartbeat, a run is given up only when its transcoder no longer answers for it.
    const silentFor = now - lastReport;
    if (silentFor > limits.heartbeatTimeoutMs && (!state.dispatch_target || silentFor > limits.heartbeatTimeoutMs + ENDING_WINDOW_MS)) {
      return { kind: "lost", reason: `The transcoder stopped reporting for more than ${Math.round(silentFor / 1000)} s.` };
    }
    if (silentFor > runProbeAfter(limits) && state.dispatch_target) return { kind: "probe", target: state.dispatch_target };
    return undefined;
  }
  if (state.dispatch === "dispatched") {
    const since = now - Date.parse(state.dispatch_at);
    if (since > START_DEADLINE_MS) return { kind: "lost", reason: "The transcoder accepted the job but never started it." };
    if (since > PROBE_AFTER_MS && state.dispatch_target) return { kind: "probe", target: state.dispatch_target };
    return undefined;
  }
  if (now - Date.parse(state.created_at) > PENDING_DEADLINE_MS) return { kind: "fail", code: "DISPATCH_FAILED", error: "No transcoder could take the task." };
  if (state.unreachable_since && state.dispatch === "queued") {
    // A run started again after a crash gets as long as a silent transcoder would have had.
    const unreachableFor = now - Date.parse(state.unreachable_since);
    if (state.retries > 0 && unreachableFor > limits.heartbeatTimeoutMs) return { kind: "fail", code: "TRANSCODER_LOST", error: `The transcoder was lost and none came back within ${limits.heartbeatTimeoutMs / 1000} s to run the task again.` };
    if (unreachableFor > UNREACHABLE_DEADLINE_MS) return { kind: "fail", code: "DISPATCH_FAILED", error: `No transcoder answered for ${UNREACHABLE_DEADLINE_MS / 60_000} minutes.` };
  }
  if (state.dispatch === "claimed") return now - Date.parse(state.dispatch_at) >= CLAIM_LEASE_MS ? { kind: "resend" } : undefined;
  return now >= Date.parse(state.resend_at) ? { kind: "resend" } : undefined;
}

/** A silent run is probed after PROBE_AFTER_MS, or once its heartbeat has lapsed if that is sooner. */
function runProbeAfter(limits: Limits): number {
  return Math.min(PROBE_AFTER_MS, limits.heartbeatTimeoutMs);
}

/** When the alarm should next look at the task; undefined once it has ended. */
export function nextCheck(state: LiveState, now: number, limits: Limits): number | undefined {
  if (isFinal(state.status)) return undefined;
  const probing = (since: number, after = PROBE_AFTER_MS) => (now - since > after ? now + PROBE_EVERY_MS : since + after + 1);
  if (state.status === "running") {
    const lastReport = Date.parse(state.heartbeat_at ?? state.started_at!);
    return Math.min(probing(lastReport, runProbeAfter(limits)), lastReport + limits.heartbeatTimeoutMs + (state.dispatch_target ? ENDING_WINDOW_MS : 0) + 1, Date.parse(state.started_at!) + limits.taskTimeoutMs + TIMEOUT_GRACE_MS + 1);
  }
  const pendingDeadline = Date.parse(state.created_at) + PENDING_DEADLINE_MS + 1;
  if (state.dispatch === "dispatched") {
    const since = Date.parse(state.dispatch_at);
    return Math.min(probing(since), since + START_DEADLINE_MS + 1);
  }
  if (state.dispatch === "claimed") return Math.min(pendingDeadline, Date.parse(state.dispatch_at) + CLAIM_LEASE_MS);
  return Math.min(pendingDeadline, Date.parse(state.resend_at));
}

/** Seconds left at the average rate so far; undefined until there is a rate to go by. */
export function etaSeconds(state: Pick<LiveState, "status" | "progress" | "started_at">, now: number): number | undefined {
  if (state.status !== "running" || !state.started_at || state.progress <= 0) return undefined;
  const elapsed = (now - Date.parse(state.started_at)) / 1000;
  if (elapsed <= 0) return undefined;
  return Math.max(0, Math.round(((100 - state.progress) * elapsed) / state.progress));
}
