import type { WebhookEvent, WebhookEventType } from "../../shared/schemas/webhooks";
import { presentTask } from "../tasks/present";
import type { TaskRow } from "../tasks/repository";

export interface TaskEvent {
  /** The `webhook-id` header: one per event, the same on every retry and redelivery. */
  id: string;
  type: WebhookEventType;
  /** The exact bytes sent and signed. */
  body: string;
}

export function webhookIdFor(taskId: string, type: WebhookEventType): string {
  return `msg_${taskId}_${type.slice("task.".length)}`;
}

/**
 * The end event of a task, built from its D1 row. A finished row no longer changes, so every
 * attempt sends the same body, and `data` is what GET /v1/tasks/{task_id} returns.
 * Undefined while the task has not ended.
 */
export function taskEvent(env: Env, row: TaskRow): TaskEvent | undefined {
  if ((row.status !== "completed" && row.status !== "failed") || !row.finished_at) return undefined;
  const type = row.status === "completed" ? "task.completed" : "task.failed";
  const event: WebhookEvent = { type, timestamp: row.finished_at, data: presentTask(env, row) };
  return { id: webhookIdFor(row.id, type), type, body: JSON.stringify(event) };
}
