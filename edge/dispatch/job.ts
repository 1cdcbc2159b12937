import type { TranscodeJob } from "../../shared/schemas/jobs";
import { config } from "../lib/config";
import { signToken } from "../lib/signed-token";

/** What a task runs, as submitted: all a dispatch needs besides the task's id and run. */
export interface JobSpec {
  /** A chained task's: its first step's command. */
  command: string;
  /** A chained task's steps (its outputs published unless `publish` is false). */
  steps?: { command: string; publish: boolean }[];
  with_metadata: boolean;
  webhook_url: string | null;
}

/**
 * The job handed to a transcoder for run `run` of the task. The owner `userId` goes into the
 * callback token, so the callbacks (edge/routes/internal.ts) find the task's R2 keys without a
 * D1 read.
 */
export async function jobFor(env: Env, taskId: string, spec: JobSpec, run: number, userId: string): Promise<TranscodeJob> {
  const settings = config(env);
  const ttl = settings.taskTimeoutSeconds + 3600;
  return {
    task_id: taskId,
    run,
    command: spec.command,
    ...(spec.steps ? { steps: spec.steps } : {}),
    with_metadata: spec.with_metadata,
    callback_url: `${settings.edgeUrl}/internal/tasks/${taskId}`,
    // The run number goes into the token: a lost run that comes back cannot report on its successor.
    callback_token: await signToken(env.SIGNING_SECRET, "callback", { t: taskId, r: run, u: userId }, ttl),
    timeout_seconds: settings.taskTimeoutSeconds,
    // The transcoder stops an output growing past what the edge stores, instead of encoding it to be refused.
    max_output_file_bytes: settings.maxUploadBytes,
  };
}
