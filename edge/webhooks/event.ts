import type { WebhookEventType } from "../../shared/schemas/webhooks";
import { presentTask } from "../tasks/present";
import type { TaskRow } from "../tasks/repository";

export interface TaskEvent {
  /** The `webhook-id` header: one per event, the same on every retry and redelivery. */
  id: string;
  /** The `webhook-event` header. */
  type: WebhookEventType;
  /** The exact bytes sent and signed. */
  body: string;
}

export function webhookIdFor(taskId: string, type: WebhookEventType): string {
  return `msg_${taskId}_${type.slice("task.".length)}`;
}

/**
 * The end event of a task, built from its D1 row. The body is the task object itself, exactly
 * what GET /v1/tasks/{task_id} returns, as FFHub posts it (receivers read `body.status`); the
 * event type travels in the `webhook-event` header, which no receiver of either kind trips on.
 * A finished row no longer changes, so every attempt sends the same bytes. Undefined while the
 * task has not ended.
 */
export function taskEvent(env: Env, row: TaskRow): TaskEvent | undefined {
  if ((row.status !== "completed" && row.status !== "failed") || !row.finished_at) return undefined;
  const type = row.status === "completed" ? "task.completed" : "task.failed";
  return { id: webhookIdFor(row.id, type), type, body: JSON.stringify(presentTask(env, row)) };
}
