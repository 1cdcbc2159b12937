import type { WebhookEventType, WebhookHandover } from "../../shared/schemas/webhooks";
import { log } from "../lib/log";
import type { WebhookReceiverObject } from "./receiver-object";

/** The storage key of the event waiting to be handed over (tests read it too). */
export const OUTBOX_KEY = "webhook-outbox";
const OUTBOX_RETRY_MS = 30_000;

/** The id of a task's event: the same on every attempt, retry and redelivery, so a receiver can drop repeats. */
export function webhookIdFor(taskId: string, type: WebhookEventType): string {
  return `msg_${taskId}_${type.slice("task.".length)}`;
}

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

/**
 * A task's end event not yet handed to its receiver's object, kept in the task object's own
 * storage. It is stored in the same put as the end (`entry`), so an end stored there always
 * has its event; the task object's alarm tries the hand-over again until it works.
 */
export class WebhookOutbox {
  constructor(private readonly storage: DurableObjectStorage) {}

  /** The entry to add to the put that stores the task's end (none without a webhook). */
  static entry(handover: WebhookHandover | undefined): Record<string, WebhookHandover> {
    return handover ? { [OUTBOX_KEY]: handover } : {};
  }

  /** When the alarm should try again, if an event is still waiting. */
  async retryAt(now: number): Promise<number | undefined> {
    return (await this.storage.get(OUTBOX_KEY)) === undefined ? undefined : now + OUTBOX_RETRY_MS;
  }

  /** Hands the waiting event over; on failure keeps it and sets the alarm to try again. */
  async flush(env: Env): Promise<void> {
    const handover = await this.storage.get<WebhookHandover>(OUTBOX_KEY);
    if (!handover) return;
    try {
      await handOver(env, handover);
      await this.storage.delete(OUTBOX_KEY);
      await this.storage.deleteAlarm();
    } catch (error) {
      log.error("webhook hand-over failed; the task's alarm tries again", { task_id: handover.task_id, error });
      await this.storage.setAlarm(Date.now() + OUTBOX_RETRY_MS);
    }
  }
}
