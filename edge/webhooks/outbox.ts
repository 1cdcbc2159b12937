import type { WebhookHandover } from "../../shared/schemas/webhooks";
import { log } from "../lib/log";
import { handOver } from "./handover";

/** The storage key of the event waiting to be handed over (tests read it too). */
export const OUTBOX_KEY = "webhook-outbox";
const RETRY_MS = 30_000;

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
    return (await this.storage.get(OUTBOX_KEY)) === undefined ? undefined : now + RETRY_MS;
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
      await this.storage.setAlarm(Date.now() + RETRY_MS);
    }
  }
}
