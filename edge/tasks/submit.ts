import type { z } from "zod";
import { randomHex } from "../../shared/encoding";
import { AppError } from "../../shared/errors";
import { checkCommand, checkSteps } from "../../shared/ffmpeg";
import type { TaskDestination } from "../../shared/schemas/destinations";
import type { CreateTaskSchema } from "../../shared/schemas/tasks";
import { startOfUtcDay } from "../accounts/usage";
import { queueJobs } from "../dispatch/dispatcher";
import { destinationOfUser } from "../destinations/deliver";
import { config } from "../lib/config";
import { checkedPresetCommand } from "../presets/expand";
import { resolvePreset } from "../presets/manage";
import { taskStub } from "../lib/stubs";
import { checkWebhookUrl } from "../webhooks/delivery";
import { insertTaskWithinQuota } from "./repository";
import { type StoredStep, shownCommand, storedSteps } from "./steps";

export type TaskSubmission = z.output<typeof CreateTaskSchema>;
export interface SubmittedTask {
  task_id: string;
  status: "pending";
  created_at: string;
}

/**
 * A user's new task: its command and webhook pass the policy, its row goes in only while the
 * user's daily quota has its time limit left (the insert itself decides, so concurrent
 * submissions cannot overdraw it), its object starts with the job, and the job is queued. A job
 * that cannot be queued fails the task at once (DISPATCH_FAILED) rather than leave it pending.
 */
export async function submitTask(env: Env, userId: string, submission: TaskSubmission, now = new Date(), retryOf?: string): Promise<SubmittedTask> {
  const settings = config(env);
  const work = await checkedWork(env, userId, submission, settings.devFetchAllowHosts);
  const webhook = submission.webhook ? checkWebhookUrl(submission.webhook, settings.devFetchAllowHosts).toString() : null;
  // The user's own destination (the request's, else its preset's), by id or name, resolved to its id: a rename later does not redirect the task.
  const named = submission.destination ?? work.destination;
  const destination = named ? { id: (await destinationOfUser(env.DB, userId, named.id)).id, mode: named.mode } : undefined;
  const taskId = `tsk_${randomHex(12)}`;
  const createdAt = now.toISOString();
  const quota = { since: startOfUtcDay(now), seconds: settings.dailyTaskSeconds, taskTimeoutSeconds: settings.taskTimeoutSeconds, requestedSeconds: submission.timeout_seconds };
  const row = { id: taskId, user_id: userId, command: work.shown, steps: storedSteps(work.steps), with_metadata: submission.with_metadata ? 1 : 0, webhook_url: webhook, created_at: createdAt, destination: destination ? JSON.stringify(destination) : null, retry_of: retryOf ?? null };
  const timeLimit = await insertTaskWithinQuota(env.DB, row, quota);
  if (timeLimit === undefined) throw quotaExceeded(quota.seconds, now);
  const task = taskStub(env, taskId);
  const job = { task_id: taskId, user_id: userId, created_at: createdAt };
  await task.init({ ...job, time_limit_seconds: timeLimit, ...(retryOf ? { retry_of: retryOf } : {}) }, { command: work.command, ...(work.steps ? { steps: work.steps } : {}), with_metadata: submission.with_metadata === true, webhook_url: webhook }, destination);
  try {
    await queueJobs(env, [job]);
  } catch (error) {
    await task.failTask("DISPATCH_FAILED", "The task could not be queued.");
    throw error;
  }
  return { task_id: taskId, status: "pending", created_at: createdAt };
}

/**
 * What the task runs, past the policy: one command (given, or a preset's with its params in
 * place), or a chain of steps (the record's `steps`; its `command` shows them one a line, and
 * the job's `command` is the first step's). Exactly one of the three. A preset's destination
 * comes with its command, for the request's own to override.
 */
async function checkedWork(env: Env, userId: string, submission: TaskSubmission, allowHosts: readonly string[]): Promise<{ shown: string; command: string; steps?: StoredStep[]; destination?: TaskDestination }> {
  const { command, steps, preset, params } = submission;
  if ([command, steps, preset].filter((given) => given !== undefined).length !== 1) {
    throw new AppError("VALIDATION_FAILED", "Give exactly one of 'command' (one ffmpeg command), 'preset' (a saved command, with its 'params') and 'steps' (a chain of commands).");
  }
  if (params !== undefined && preset === undefined) throw new AppError("VALIDATION_FAILED", "'params' go with a 'preset'; a 'command' or 'steps' take none.");
  if (steps) {
    const checked = checkSteps(steps, { allowHosts });
    const kept = checked.map((step) => ({ command: steps[step.index]!.command, publish: step.publish }));
    return { shown: shownCommand(kept), command: kept[0]!.command, steps: kept };
  }
  const saved = preset !== undefined ? await resolvePreset(env, userId, preset) : undefined;
  const one = saved ? checkedPresetCommand(saved, params ?? {}, { allowHosts }).command : command!;
  if (!saved) checkCommand(one, { allowHosts });
  return { shown: one, command: one, ...(saved?.destination ? { destination: saved.destination } : {}) };
}

/**
 * DAILY_TASK_SECONDS of processing per user and UTC day (GET /v1/me's remaining_credits) are
 * used up or reserved by unfinished tasks: the insert refused the task.
 */
function quotaExceeded(quota: number, now: Date): AppError {
  const retryAfter = Math.max(1, Math.ceil((Date.parse(startOfUtcDay(now)) + 86_400_000 - now.getTime()) / 1000));
  return new AppError(
    "QUOTA_EXCEEDED",
    `Today's ${quota} s of processing are used up or held by your unfinished tasks (each holds its time limit until it ends); new tasks are accepted again when one ends under its limit, or at 00:00 UTC.`,
    { retry_after: retryAfter },
  ).withHeaders({ "Retry-After": String(retryAfter) });
}
