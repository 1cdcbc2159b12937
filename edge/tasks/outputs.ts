/** Where a task's output lives in R2 (and so on the CDN): `outputs/<user_id>/<task_id>/<filename>`. */
export function outputKey(userId: string, taskId: string, filename: string): string {
  return `outputs/${userId}/${taskId}/${filename}`;
}
