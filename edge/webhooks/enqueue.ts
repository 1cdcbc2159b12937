import type { WebhookMessage } from "../../shared/schemas/webhooks";

/**
 * Called by the task's Durable Object once the task's end is written to D1. Delivery happens
 * in the queue consumer, so a receiver that is down never holds up or fails the task; and
 * this never throws: a failed enqueue is logged, the transition stands.
 */
export async function enqueueTaskEnded(env: Env, taskId: string): Promise<void> {
  try {
    const row = await env.DB.prepare("SELECT webhook_url FROM tasks WHERE id = ?").bind(taskId).first<{ webhook_url: string | null }>();
    if (row?.webhook_url) await env.WEBHOOKS.send(message(taskId, false));
  } catch (error) {
    console.error(JSON.stringify({ msg: "webhook enqueue failed", task_id: taskId, error: String(error) }));
  }
}

/** A user's request to send a finished task's event again. */
export async function enqueueRedelivery(env: Env, taskId: string): Promise<void> {
  await env.WEBHOOKS.send(message(taskId, true));
}

function message(taskId: string, redelivery: boolean): WebhookMessage {
  return { task_id: taskId, first_attempt_at: new Date().toISOString(), redelivery };
}
