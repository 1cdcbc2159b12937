import { purgeCached } from "../files/cdn-cache";
import { deleteTaskOutputRows } from "./repository";
import { fail, type LiveState } from "./state";

/** Where a task's output lives in R2 (and so on the CDN): `outputs/<user_id>/<task_id>/<filename>`. */
export function outputKey(userId: string, taskId: string, filename: string): string {
  return `outputs/${userId}/${taskId}/${filename}`;
}

/** ffmpeg's stderr of a task: not under a CDN-served prefix, read only through the API. */
export function logKey(userId: string, taskId: string): string {
  return `logs/${userId}/${taskId}.log`;
}

/** Outputs count only once they are really in R2 with the size the transcoder reported. */
export async function verifyStoredOutputs(files: R2Bucket, state: LiveState): Promise<LiveState> {
  for (const output of state.outputs ?? []) {
    const head = await files.head(outputKey(state.user_id, state.task_id, output.filename));
    if (!head || head.size !== output.size) {
      return fail({ ...state, progress: 99, outputs: null }, "OUTPUT_UPLOAD_FAILED", `Output '${output.filename}' was reported but is not stored.`, state.finished_at!);
    }
  }
  return state;
}

/**
 * Deletes everything a task stored under its outputs (with `withLog`, its log too): the R2
 * objects, their cached copies and their file rows, so nothing of it is listed, served or
 * counted. Objects first: a row without its object is harmless, an object without a row would
 * be swept by nothing. An output still on its way in is refused its row once the task has ended
 * (files/records.ts insertOutputFile) and deletes its own object.
 */
export async function discardTaskFiles(env: Env, userId: string, taskId: string, withLog = false): Promise<void> {
  const keys = withLog ? [logKey(userId, taskId)] : [];
  let cursor: string | undefined;
  do {
    const page = await env.FILES.list({ prefix: outputKey(userId, taskId, ""), cursor });
    keys.push(...page.objects.map((object) => object.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  if (keys.length > 0) {
    await env.FILES.delete(keys);
    await purgeCached(env, keys);
  }
  await deleteTaskOutputRows(env.DB, userId, taskId);
}
