import type { JobMessage } from "../../shared/schemas/queue";

/** A task in a waiting line: what its job message carries, so the line can queue it again. */
export type Waiting = JobMessage;

/** Lines serve the oldest submission first (ties by id, so the order is total). */
export function oldestFirst(a: Waiting, b: Waiting): number {
  return a.created_at.localeCompare(b.created_at) || a.task_id.localeCompare(b.task_id);
}
