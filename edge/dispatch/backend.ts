import type { TranscodeJob } from "../../shared/schemas/jobs";

/** One interface, two backends: local Fastify processes or one Cloudflare Container per task. */
export interface Dispatcher {
  dispatch(job: TranscodeJob): Promise<DispatchOutcome>;
  /** Stops the task's run `run` at `target` (a run given up for a newer one), or whichever run is there (a canceled task). */
  cancel(taskId: string, target: string, run?: number): Promise<void>;
  /**
   * The task has ended: whatever ran it may go (its container is removed; a shared server
   * stays). Also called for a task with no target yet: it may have ended while its dispatch was
   * on its way, and a container may already be starting for it.
   */
  release(taskId: string, target: string | null): Promise<void>;
  /**
   * False only when run `run` of the task is certainly gone from `target` (the server is down,
   * or answers that it does not have that run), so the task can be started again at once
   * instead of after the heartbeat timeout. A run whose work is done and whose end is still on
   * its way to the edge is not gone.
   */
  isRunning(taskId: string, target: string, run: number): Promise<boolean>;
}

/**
 * What a transcoder said to a job. `busy` and `unreachable` are worth trying again later;
 * `stale`: that run of the task already ran there (or a later one did), so this dispatch
 * started nothing and the run is lost. Only `accepted` means the run is running.
 */
export type DispatchOutcome =
  | { kind: "accepted"; target: string }
  | { kind: "stale"; detail: string }
  | { kind: "busy"; detail: string }
  | { kind: "unreachable"; detail: string }
  | { kind: "rejected"; detail: string };

/** Turns a transcoder's answer to `POST /jobs` into an outcome. */
export async function outcomeOf(response: Response, target: string): Promise<DispatchOutcome> {
  // The status decides the outcome; the body only adds detail.
  const body = await response.text().catch(() => "");
  if (response.status === 202) return { kind: "accepted", target };
  if (response.status === 409) return { kind: "stale", detail: `${target} had already run this attempt of the task (409): ${body.slice(0, 300)}` };
  // At capacity, shutting down or short of work space: not taken now, and nothing is lost.
  if (response.status === 429 || response.status === 503) return { kind: "busy", detail: `${target} cannot take the job now (${response.status}): ${body.slice(0, 300)}` };
  if (response.status >= 500) return { kind: "unreachable", detail: `${target} answered ${response.status}` };
  return { kind: "rejected", detail: `${target} refused the job (${response.status}): ${body.slice(0, 300)}` };
}
