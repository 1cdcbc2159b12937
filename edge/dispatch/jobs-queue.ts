import type { JobMessage } from "../../shared/schemas/queue";

/** The one producer of job messages: asks the consumer to dispatch these tasks. */
export async function queueJobs(env: Env, taskIds: readonly string[]): Promise<void> {
  if (taskIds.length === 0) return;
  await env.JOBS.sendBatch(taskIds.map((task_id) => ({ body: { task_id } satisfies JobMessage })));
}
