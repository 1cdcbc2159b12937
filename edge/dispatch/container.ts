import { getContainer } from "@cloudflare/containers";
import { CONTAINER_EDGE_HOST } from "../../shared/egress";
import type { TranscodeJob } from "../../shared/schemas/jobs";
import type { TranscoderContainer } from "./transcoder-container";
import { type DispatchOutcome, type Dispatcher, outcomeOf } from "./backend";

const TARGET_PREFIX = "container:";

/**
 * Production: one Cloudflare Container per task, addressed by the task id, so a task's
 * ffmpeg never shares a machine with another user's. The container lives exactly as long as
 * the task's runs: started by the dispatch, removed when a run is given up (cancel) before
 * the next one went in, and when the task ends (release), whatever the ending.
 * https://developers.cloudflare.com/containers/
 */
export function containerDispatcher(env: Env): Dispatcher {
  const namespace = env.TRANSCODER as unknown as DurableObjectNamespace<TranscoderContainer>;
  const container = (taskId: string) => getContainer(namespace, taskId);
  return {
    async dispatch(job: TranscodeJob): Promise<DispatchOutcome> {
      const target = `${TARGET_PREFIX}${job.task_id}`;
      try {
        // The container reaches the edge through its outbound handler, never our public hostname,
        // and its outputs stream into R2 there (no presigned URL, no request-body limit).
        const response = await container(job.task_id).startJob({ ...job, callback_url: `https://${CONTAINER_EDGE_HOST}/internal/tasks/${job.task_id}`, outputs_direct: true });
        return outcomeOf(response, target);
      } catch (error) {
        return { kind: "unreachable", detail: `${target}: ${(error as Error).message}` };
      }
    },
    // A run given up for a new one: its container goes with it (the next run starts clean) unless
    // the next run is already in there. Without a run, the task was canceled: it has ended.
    async cancel(taskId: string, _target: string, run?: number): Promise<void> {
      await (run === undefined ? container(taskId).endTask(taskId) : container(taskId).stopRun(taskId, run));
    },
    async release(taskId: string): Promise<void> {
      await container(taskId).endTask(taskId);
    },
    // Asks the container's object without starting a container; a crashed one is noticed at once.
    async isRunning(taskId: string): Promise<boolean> {
      return container(taskId).isRunning();
    },
  };
}
