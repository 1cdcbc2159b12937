import type { JobMessage } from "../../shared/schemas/queue";

/** The one producer of job messages: asks the consumer to dispatch these tasks. */
export async function queueJobs(env: Env, jobs: readonly JobMessage[]): Promise<void> {
  if (jobs.length === 0) return;
  await env.JOBS.sendBatch(jobs.map(({ task_id, user_id, created_at }) => ({ body: { task_id, user_id, created_at } satisfies JobMessage })));
}
