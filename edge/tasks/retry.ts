import { AppError } from "../../shared/errors";
import { checkCommand, checkSteps } from "../../shared/ffmpeg";
import type { RetriedTask } from "../../shared/schemas/batch";
import type { TaskDestination } from "../../shared/schemas/destinations";
import { CreateTaskSchema } from "../../shared/schemas/tasks";
import { findDestination } from "../destinations/repository";
import { isServed, servedKeyOf } from "../files/served-files";
import { config } from "../lib/config";
import { type TaskRow, requireOwnTask } from "./repository";
import { isFinal } from "./state";
import { stepsOfRecord } from "./steps";
import { type TaskSubmission, submitTask } from "./submit";

/** CreateTask's bound on timeout_seconds. */
const MAX_TIMEOUT_SECONDS = 86_400;

/**
 * A finished task of the user (completed or failed, canceled included) run again as a new task:
 * the same command (a preset's task stored its expanded command), metadata choice, webhook,
 * time limit and destination, submitted like any new task (policy, quota, queue). Refused
 * before anything is written when the task has not finished (TASK_NOT_FINISHED), when one of
 * its inputs is a file of ours that is gone (INPUT_EXPIRED, naming it: that task would only
 * fail at download), or when its destination was deleted since (DESTINATION_GONE, naming it:
 * the retry would deliver nowhere the user chose).
 */
export async function retryTask(env: Env, userId: string, taskId: string, now = new Date()): Promise<RetriedTask> {
  const row = await requireOwnTask(env.DB, userId, taskId);
  if (!isFinal(row.status)) {
    throw new AppError("TASK_NOT_FINISHED", `Task '${taskId}' is ${row.status}; only a completed or failed task can be retried. Wait for it to end, or cancel it first.`);
  }
  const submission = resubmissionOf(row);
  await requireInputsServed(env, taskId, inputsOf(env, submission), now);
  if (submission.destination) await requireDestinationKept(env.DB, userId, taskId, submission.destination.id);
  return { ...(await submitTask(env, userId, submission, now, taskId)), retry_of: taskId };
}

/**
 * What the task was submitted with, as a new submission. The time limit is the one it ran under
 * (the row keeps no other), except after a TIMEOUT: that limit may have been cut by the day's
 * quota, and the same limit would end the retry the same way.
 */
function resubmissionOf(row: TaskRow): TaskSubmission {
  const timeLimit = row.error_code === "TIMEOUT" ? undefined : row.time_limit_seconds;
  const steps = stepsOfRecord(row);
  return CreateTaskSchema.parse({
    ...(steps ? { steps } : { command: row.command }),
    with_metadata: row.with_metadata === 1,
    ...(row.webhook_url === null ? {} : { webhook: row.webhook_url }),
    ...(timeLimit ? { timeout_seconds: Math.min(timeLimit, MAX_TIMEOUT_SECONDS) } : {}),
    ...(row.destination ? { destination: JSON.parse(row.destination) as TaskDestination } : {}),
  });
}

/** The URLs a submission downloads: its command's inputs, or every step's (references to earlier steps are not URLs). */
function inputsOf(env: Env, submission: TaskSubmission): string[] {
  const allowHosts = config(env).devFetchAllowHosts;
  if (submission.steps) return checkSteps(submission.steps, { allowHosts }).flatMap((step) => step.parsed.inputs.map((input) => input.url));
  return checkCommand(submission.command!, { allowHosts }).inputs.map((input) => input.url);
}

async function requireInputsServed(env: Env, taskId: string, inputs: readonly string[], now: Date): Promise<void> {
  for (const url of new Set(inputs)) {
    const key = servedKeyOf(env, url);
    if (key !== undefined && !(await isServed(env, key, now))) {
      throw new AppError(
        "INPUT_EXPIRED",
        `Input '${url}' of task '${taskId}' has expired or was deleted, so a retry could only fail. Upload the file again and submit a new task (POST /v1/tasks) with its new URL.`,
        { input: url },
      );
    }
  }
}

async function requireDestinationKept(db: D1Database, userId: string, taskId: string, destinationId: string): Promise<void> {
  if (await findDestination(db, userId, destinationId)) return;
  throw new AppError(
    "DESTINATION_GONE",
    `Task '${taskId}' delivered its outputs to destination '${destinationId}', which has been deleted since, so a retry is not submitted. Submit a new task (POST /v1/tasks) naming another destination, or none.`,
    { destination: destinationId },
  );
}
