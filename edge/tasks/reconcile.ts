import { log } from "../lib/log";
import { taskStub } from "../lib/stubs";
import { findTaskById, listUnfinishedTaskIds } from "./repository";

/** Younger tasks are still in their first dispatch; their objects' alarms are looking after them. */
const RECONCILE_AFTER_MS = 2 * 60_000;
const RECONCILE_BATCH = 500;

/**
 * The cron's second line behind each task's own alarm: every task that has not ended gets
 * its Durable Object checked, so a task whose object lost its state or its alarm still gets
 * dispatched or failed within its deadline. Returns how many tasks were checked.
 */
export async function reconcileUnfinishedTasks(env: Env, now = new Date()): Promise<number> {
  const taskIds = await listUnfinishedTaskIds(env.DB, new Date(now.getTime() - RECONCILE_AFTER_MS).toISOString(), RECONCILE_BATCH);
  const results = await Promise.allSettled(taskIds.map(async (taskId) => {
    const row = await findTaskById(env.DB, taskId);
    if (row) await taskStub(env, taskId).reconcile({ task_id: row.id, user_id: row.user_id, created_at: row.created_at, ...(row.time_limit_seconds ? { time_limit_seconds: row.time_limit_seconds } : {}), ...(row.retry_of ? { retry_of: row.retry_of } : {}) });
  }));
  for (const [index, result] of results.entries()) {
    if (result.status === "rejected") log.error("could not reconcile a task", { task_id: taskIds[index], error: result.reason });
  }
  return taskIds.length;
}
