import { getContainer } from "@cloudflare/containers";
import type { TranscodeJob } from "../../shared/schemas/jobs";
import type { TranscoderContainer } from "./transcoder-container";
import type { Dispatcher } from "./dispatcher";
import { type DispatchOutcome, outcomeOf } from "./outcome";

/**
 * Production: one Cloudflare Container per task, addressed by the task id, so a task's
 * ffmpeg never shares a machine with another user's. `getContainer` starts it on first use.
 * https://developers.cloudflare.com/containers/
 */
export function containerDispatcher(env: Env): Dispatcher {
  const namespace = env.TRANSCODER as unknown as DurableObjectNamespace<TranscoderContainer>;
  const headers = { authorization: `Bearer ${env.TRANSCODER_SECRET}`, "content-type": "application/json" };
  return {
    async dispatch(job: TranscodeJob): Promise<DispatchOutcome> {
      const target = `container:${job.task_id}`;
      try {
        const response = await getContainer(namespace, job.task_id).fetch(new Request("http://transcoder/jobs", { method: "POST", headers, body: JSON.stringify(job) }));
        return outcomeOf(response, target);
      } catch (error) {
        return { kind: "unreachable", detail: `${target}: ${(error as Error).message}` };
      }
    },
    async cancel(taskId: string): Promise<void> {
      await getContainer(namespace, taskId)
        .fetch(new Request(`http://transcoder/jobs/${encodeURIComponent(taskId)}`, { method: "DELETE", headers }))
        .catch(() => undefined);
    },
    async release(taskId: string): Promise<void> {
      await getContainer(namespace, taskId).stop().catch(() => undefined);
    },
    // Probing a stopped container would start a new one; its heartbeats decide instead.
    async isAlive(): Promise<boolean> {
      return true;
    },
  };
}
