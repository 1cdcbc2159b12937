/** A task in a waiting line. */
export interface Waiting {
  task_id: string;
  created_at: string;
}

/** Lines serve the oldest submission first (ties by id, so the order is total). */
export function oldestFirst(a: Waiting, b: Waiting): number {
  return a.created_at.localeCompare(b.created_at) || a.task_id.localeCompare(b.task_id);
}
