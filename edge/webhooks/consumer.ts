import { WebhookMessageSchema } from "../../shared/schemas/webhooks";
import { findTaskById } from "../tasks/repository";
import type { WebhookReceiverObject } from "./receiver-object";

/**
 * The webhooks queue consumer: hands each event to its receiver's Durable Object (one per
 * webhook URL), which makes the attempts, records each in D1 and retries on the schedule
 * until 24 h have passed since the first; a redelivery is a single attempt. Nothing here waits
 * on a receiver, so one that is slow or down never delays another's events. Delivery is at
 * least once: receivers deduplicate on `webhook-id`.
 */
export async function deliverWebhooks(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  await Promise.all(batch.messages.map(async (message) => {
    try {
      const parsed = WebhookMessageSchema.safeParse(message.body);
      if (!parsed.success) {
        console.error(JSON.stringify({ msg: "dropping malformed webhook message", body: message.body }));
        return message.ack();
      }
      const row = await findTaskById(env.DB, parsed.data.task_id);
      await receiverStub(env, row?.webhook_url).accept(message.id, message.body, message.attempts - 1);
      message.ack();
    } catch (error) {
      // Retry this message alone: throwing would make Queues retry the whole batch.
      console.error(JSON.stringify({ msg: "webhook hand-over failed", body: message.body, error: String(error) }));
      message.retry({ delaySeconds: HANDOVER_RETRY_SECONDS });
    }
  }));
}

const HANDOVER_RETRY_SECONDS = 5;

/**
 * The object of the receiver at `url`. A receiver is an endpoint URL, not a host: many users'
 * endpoints can share one host (a hosted automation service), and one of them being slow must
 * not hold up the others. Events that cannot be sent anywhere share one object, which drops them.
 */
export function receiverStub(env: Env, url: string | null | undefined): DurableObjectStub<WebhookReceiverObject> {
  return env.WEBHOOK_RECEIVERS.get(env.WEBHOOK_RECEIVERS.idFromName(url ?? "nowhere"));
}
