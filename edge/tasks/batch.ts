import type { z } from "zod";
import { AppError, type ProblemSchema, problemBody } from "../../shared/errors";
import type { TaskBatchResult } from "../../shared/schemas/batch";
import { CreateTaskSchema } from "../../shared/schemas/tasks";
import { log } from "../lib/log";
import { type TaskSubmission, submitTask } from "./submit";

type ItemResult = TaskBatchResult["results"][number];
type Problem = z.infer<typeof ProblemSchema>;

/**
 * Up to 100 tasks of one user, each submitted as POST /v1/tasks submits one (`submitTask`), in
 * order, so the daily quota is taken item by item, as if they came one request each. Every item
 * gets its own result — the created task, or the problem that refused it
 * (malformed, refused by the policy or the webhook check, over the quota), named by its index —
 * and a refused item never blocks the others.
 */
export async function submitBatch(env: Env, userId: string, items: readonly unknown[], now = new Date()): Promise<TaskBatchResult> {
  const results: ItemResult[] = [];
  for (const [index, item] of items.entries()) results.push(await submitItem(env, userId, item, index, now));
  const created = results.filter((result) => "task_id" in result).length;
  return { results, created, refused: results.length - created };
}

async function submitItem(env: Env, userId: string, item: unknown, index: number, now: Date): Promise<ItemResult> {
  try {
    return { index, ...(await submitTask(env, userId, parseItem(item, index), now)) };
  } catch (error) {
    if (error instanceof AppError) return { index, error: itemProblem(error, index) };
    // The batch goes on: items already created stay created, and the answer (kept under its
    // Idempotency-Key) must say which; this one is reported refused, its cause logged.
    log.error("batch item not submitted", { user_id: userId, index, error });
    return { index, error: itemProblem(new AppError("INTERNAL", "This task could not be submitted because of an internal error, which has been logged; submit it again."), index) };
  }
}

/** One item against CreateTask, refused as the route's validator refuses a whole body. */
function parseItem(item: unknown, index: number): TaskSubmission {
  const parsed = CreateTaskSchema.safeParse(item);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map(({ path, message }) => ({ path: ["tasks", index, ...path], message }));
  const text = parsed.error.issues.map((issue) => `${issue.path.join(".") || "task"}: ${issue.message}`);
  throw new AppError("VALIDATION_FAILED", `The task is invalid. ${text.join("; ")}.`, { issues });
}

/** The problem POST /v1/tasks would answer, its detail and `pointer` naming the item. */
function itemProblem(error: AppError, index: number): Problem {
  return { ...(problemBody(error) as Problem), detail: `tasks[${index}]: ${error.detail}`, pointer: `/tasks/${index}` };
}
