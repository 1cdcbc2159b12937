import type { TaskFailureCode } from "../../shared/errors";
import type { JobEvent } from "../../shared/schemas/jobs";
import type { TaskStatus } from "../../shared/schemas/tasks";

export type StoredOutput = Extract<JobEvent, { type: "completed" }>["outputs"][number];

/** A task's live state, held by its Durable Object. */
export interface LiveState {
  task_id: string;
  user_id: string;
  status: TaskStatus;
  /** 0–100, fractional while running. */
  progress: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Highest report sequence number applied for the current run. */
  last_seq: number;
  heartbeat_at: string | null;
  dispatch: "none" | "claimed" | "dispatched";
  dispatch_claimed_at: string | null;
  dispatch_target: string | null;
  dispatched_at: string | null;
  outputs: StoredOutput[] | null;
  error: string | null;
  error_code: TaskFailureCode | null;
}

export const isFinal = (status: TaskStatus) => status === "completed" || status === "failed";

export function initialState(meta: { task_id: string; user_id: string; created_at: string }): LiveState {
  return {
    ...meta, status: "pending", progress: 0, started_at: null, finished_at: null, last_seq: -1, heartbeat_at: null,
    dispatch: "none", dispatch_claimed_at: null, dispatch_target: null, dispatched_at: null, outputs: null, error: null, error_code: null,
  };
}

/**
 * The only transitions a task makes: pending → running → completed | failed, and pending →
 * failed. Reports are applied in `seq` order; duplicates and stale ones change nothing, and
 * nothing leaves an end state. Returns undefined when the event is ignored.
 */
export function applyEvent(state: LiveState, event: JobEvent, now: string): LiveState | undefined {
  if (isFinal(state.status) || event.seq <= state.last_seq) return undefined;
  const next: LiveState = { ...state, last_seq: event.seq, heartbeat_at: now };
  switch (event.type) {
    case "started":
      return state.status === "pending" ? { ...next, status: "running", started_at: now } : next;
    case "progress":
      return {
        ...next,
        status: "running",
        started_at: state.started_at ?? now,
        // Shown below 100 until the outputs are really stored.
        progress: Math.max(state.progress, Math.min(event.progress, 99)),
      };
    case "completed":
      return { ...next, status: "completed", progress: 100, started_at: state.started_at ?? now, finished_at: now, outputs: event.outputs };
    case "failed":
      return fail(next, event.error_code, event.error, now);
  }
}

export function fail(state: LiveState, code: TaskFailureCode, error: string, now: string): LiveState {
  return { ...state, status: "failed", finished_at: now, error, error_code: code };
}

/** Seconds left at the average rate so far; undefined until there is a rate to go by. */
export function etaSeconds(state: Pick<LiveState, "status" | "progress" | "started_at">, now: number): number | undefined {
  if (state.status !== "running" || !state.started_at || state.progress <= 0) return undefined;
  const elapsed = (now - Date.parse(state.started_at)) / 1000;
  if (elapsed <= 0) return undefined;
  return Math.max(0, Math.round(((100 - state.progress) * elapsed) / state.progress));
}
