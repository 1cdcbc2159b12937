import type { WebhookEventType, WebhookHandover } from "../../shared/schemas/webhooks";
import { presentTask } from "../tasks/present";
import type { TaskRow } from "../tasks/repository";

export type TaskEvent = WebhookHandover["event"];

export function webhookIdFor(taskId: string, type: WebhookEventType): string {
  return `msg_${taskId}_${type.slice("task.".length)}`;
}

/**
 * The end event of a task, built from its record. The body is the task object itself, exactly
 * what GET /v1/tasks/{task_id} returns, as FFHub posts it (receivers read `body.status`); the
 * event type travels in the `webhook-event` header, which no receiver of either kind trips on.
 * A finished task no longer changes, so every attempt sends the same bytes. Undefined while the
 * task has not ended.
 */
export function taskEvent(env: Env, row: TaskRow): TaskEvent | undefined {
  if ((row.status !== "completed" && row.status !== "failed") || !row.finished_at) return undefined;
  const type = row.status === "completed" ? "task.completed" : "task.failed";
  return { id: webhookIdFor(row.id, type), type, body: JSON.stringify(presentTask(env, row)) };
}

/** What the receiver's object needs to deliver the task's end event; undefined without a webhook or an end. */
export function handoverFor(env: Env, row: TaskRow, redelivery: boolean, now = new Date()): WebhookHandover | undefined {
  const event = taskEvent(env, row);
  if (!row.webhook_url || !event) return undefined;
  return { task_id: row.id, user_id: row.user_id, url: row.webhook_url, event, first_attempt_at: now.toISOString(), redelivery };
}
