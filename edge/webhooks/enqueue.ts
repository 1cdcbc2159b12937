import type { WebhookMessage } from "../../shared/schemas/webhooks";
import { findTaskById, listUnsentWebhookTaskIds, markWebhookEnqueued } from "../tasks/repository";

/**
 * Called by the task's Durable Object once the task's end is written to D1. Delivery happens
 * in the queue consumer, so a receiver that is down never holds up or fails the task; and
 * this never throws: a failed enqueue is logged, the transition stands.
 */
export async function enqueueTaskEnded(env: Env, taskId: string): Promise<void> {
  try {
    const row = await findTaskById(env.DB, taskId);
    if (!row?.webhook_url) return;
    await env.WEBHOOKS.send(message(taskId, false));
    await markWebhookEnqueued(env.DB, taskId, new Date().toISOString());
  } catch (error) {
    console.error(JSON.stringify({ msg: "webhook enqueue failed", task_id: taskId, error: String(error) }));
  }
}

/** Finished this long ago and still not queued means the Durable Object's enqueue never happened. */
const UNSENT_GRACE_MS = 2 * 60_000;
const UNSENT_BATCH = 100;

/**
 * The cron's outbox sweep: queues the event of every finished task with a webhook whose
 * event was never queued. A crash after sending but before marking can queue an event twice;
 * it carries the same `webhook-id`, so receivers see one event (at-least-once, never lost).
 */
export async function sweepUnsentWebhooks(env: Env, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - UNSENT_GRACE_MS).toISOString();
  const taskIds = await listUnsentWebhookTaskIds(env.DB, cutoff, UNSENT_BATCH);
  for (const taskId of taskIds) await enqueueTaskEnded(env, taskId);
  return taskIds.length;
}

/** A user's request to send a finished task's event again. */
export async function enqueueRedelivery(env: Env, taskId: string): Promise<void> {
  await env.WEBHOOKS.send(message(taskId, true));
}

function message(taskId: string, redelivery: boolean): WebhookMessage {
  return { task_id: taskId, first_attempt_at: new Date().toISOString(), redelivery };
}
