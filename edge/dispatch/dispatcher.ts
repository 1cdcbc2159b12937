import type { TranscodeJob } from "../../shared/schemas/jobs";
import { containerDispatcher } from "./container";
import type { DispatchOutcome } from "./outcome";
import { urlDispatcher } from "./transcoder-url";

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

export function dispatcherFor(env: Env): Dispatcher {
  return env.TRANSCODER_URL.trim() ? urlDispatcher(env) : containerDispatcher(env);
}
