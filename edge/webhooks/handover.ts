import type { WebhookHandover } from "../../shared/schemas/webhooks";
import { log } from "../lib/log";
import { listUndeliveredWebhookTasks } from "../tasks/repository";
import { handoverFor } from "./event";
import { RETRY_WINDOW_MS } from "./retry";
import type { WebhookReceiverObject } from "./receiver-object";

/**
 * The object of the receiver at `url`. A receiver is an endpoint URL, not a host: many users'
 * endpoints can share one host (a hosted automation service), and one of them being slow must
 * not hold up the others.
 */
export function receiverStub(env: Env, url: string): DurableObjectStub<WebhookReceiverObject> {
  return env.WEBHOOK_RECEIVERS.get(env.WEBHOOK_RECEIVERS.idFromName(url));
}

/** Gives an event to its receiver's object, which delivers and retries it; returns once it is stored there. */
export async function handOver(env: Env, handover: WebhookHandover): Promise<void> {
  await receiverStub(env, handover.url).accept(handover);
}

/** Finished this long ago with no attempt recorded means the task's own hand-over never happened. */
const UNSENT_GRACE_MS = 2 * 60_000;
const UNSENT_BATCH = 100;

/**
 * The cron's sweep behind each task's outbox: hands over the event of every task that ended
 * with a webhook in the last 24 h and still has no recorded attempt (its Durable Object lost
 * the end between D1 and its own storage). A receiver still holding the event ignores the
 * repeat; should one be sent twice, it carries the same `webhook-id` (at least once, never lost).
 */
export async function sweepUndeliveredWebhooks(env: Env, now = new Date()): Promise<number> {
  const rows = await listUndeliveredWebhookTasks(env.DB, {
    after: new Date(now.getTime() - RETRY_WINDOW_MS).toISOString(),
    before: new Date(now.getTime() - UNSENT_GRACE_MS).toISOString(),
    limit: UNSENT_BATCH,
  });
  let handed = 0;
  for (const row of rows) {
    const handover = handoverFor(env, row, false, now);
    if (!handover) continue;
    await handOver(env, handover).then(() => handed++, (error) => log.error("webhook sweep hand-over failed", { task_id: row.id, error }));
  }
  return handed;
}
