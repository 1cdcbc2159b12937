import type { TranscodeJob } from "../../shared/schemas/jobs";

/** One interface, two backends: local Fastify processes or one Cloudflare Container per task. */
export interface Dispatcher {
  dispatch(job: TranscodeJob): Promise<DispatchOutcome>;
  cancel(taskId: string, target: string): Promise<void>;
  /** The task has ended: whatever ran it may go (a container is stopped; a shared server stays). */
  release(taskId: string, target: string): Promise<void>;
  /**
   * False only when the task's run is certainly gone from `target` (the server is down, or
   * answers that it does not have the job), so the task can be started again at once instead
   * of after the heartbeat timeout.
   */
  isRunning(taskId: string, target: string): Promise<boolean>;
}

/** What a transcoder said to a job. `busy` and `unreachable` are worth trying again later. */
export type DispatchOutcome =
  | { kind: "accepted"; target: string }
  | { kind: "duplicate"; target: string }
  | { kind: "busy"; detail: string }
  | { kind: "unreachable"; detail: string }
  | { kind: "rejected"; detail: string };

/** Turns a transcoder's answer to `POST /jobs` into an outcome. */
export async function outcomeOf(response: Response, target: string): Promise<DispatchOutcome> {
  const body = await response.text().catch(() => "");
  if (response.status === 202) return { kind: "accepted", target };
  if (response.status === 409) return { kind: "duplicate", target };
  if (response.status === 429 || response.status === 503) return { kind: "busy", detail: `${target} is at capacity (${response.status})` };
  if (response.status >= 500) return { kind: "unreachable", detail: `${target} answered ${response.status}` };
  return { kind: "rejected", detail: `${target} refused the job (${response.status}): ${body.slice(0, 300)}` };
}
