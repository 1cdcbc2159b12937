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
