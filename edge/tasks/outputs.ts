/** Where a task's output lives in R2 (and so on the CDN): `outputs/<user_id>/<task_id>/<filename>`. */
export function outputKey(userId: string, taskId: string, filename: string): string {
  return `outputs/${userId}/${taskId}/${filename}`;
}

/** ffmpeg's stderr of a task: not under a CDN-served prefix, read only through the API. */
export function logKey(userId: string, taskId: string): string {
  return `logs/${userId}/${taskId}.log`;
}
