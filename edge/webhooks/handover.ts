import { AppError } from "../../shared/errors";
import type { EndpointHandover, ProgressHandover, WebhookEndpoint, WebhookEventType, WebhookHandover } from "../../shared/schemas/webhooks";
import { log } from "../lib/log";
import { type EndpointEvent, endpointsWithoutAttempts, findEndpointEvent, recordEvents } from "./endpoint-log";
import { subscribedEndpoints } from "./endpoints";
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

/** The object of a registered endpoint: one per endpoint, so its secret and URL are its own whatever other endpoints share the URL. */
export function endpointReceiverStub(env: Env, endpointId: string): DurableObjectStub<WebhookReceiverObject> {
  return env.WEBHOOK_RECEIVERS.get(env.WEBHOOK_RECEIVERS.idFromName(`endpoint:${endpointId}`));
}

/**
 * Gives a task's end event to its receivers' objects, which deliver and retry it; returns once
 * it is stored there: the task's own webhook, and (unless it is a redelivery of that webhook)
 * every enabled endpoint of the owner subscribed to the event.
 */
export async function handOver(env: Env, handover: WebhookHandover): Promise<void> {
  const { url, redelivery, user_id, task_id, event } = handover;
  await Promise.all([
    url ? receiverStub(env, url).accept(handover) : undefined,
    redelivery ? undefined : fanOutToEndpoints(env, { user_id, task_id, ...event }, new Date(handover.first_attempt_at), handover.endpoints),
  ]);
}

/**
 * Hands an event to each of the user's endpoints subscribed to it (`subscribed` when the caller
 * has just read them, else read here), recording it in each one's log first. Safe to repeat (an
 * outbox retry, the cron's sweep): an endpoint with an attempt on record is skipped, and a
 * receiver still holding the event ignores it. Returns how many were handed it.
 */
export async function fanOutToEndpoints(env: Env, event: EndpointEvent, now = new Date(), subscribed?: readonly string[]): Promise<number> {
  const endpoints = subscribed ?? (await subscribedEndpoints(env.DB, event.user_id, event.type));
  if (endpoints.length === 0) return 0;
  await recordEvents(env.DB, endpoints, event, now);
  const waiting = await endpointsWithoutAttempts(env.DB, endpoints, event.id);
  const firstAttemptAt = new Date().toISOString();
  await Promise.all(
    waiting.map((endpointId) =>
      endpointReceiverStub(env, endpointId).accept({
        endpoint_id: endpointId, event: { id: event.id, type: event.type, body: event.body }, task_id: event.task_id, first_attempt_at: firstAttemptAt, redelivery: false,
      } satisfies EndpointHandover),
    ),
  );
  return waiting.length;
}

/**
 * Gives a running task's progress event to each endpoint's object, which sends it once, unless a
 * newer one replaced it first or the task's end got there first. Nothing is written to D1 here.
 */
export async function handOverProgress(env: Env, endpointIds: readonly string[], progress: Omit<ProgressHandover, "endpoint_id">): Promise<void> {
  await Promise.all(endpointIds.map((endpointId) => endpointReceiverStub(env, endpointId).offerProgress({ ...progress, endpoint_id: endpointId } satisfies ProgressHandover)));
}

/**
 * Sends a recorded event to the endpoint again: one attempt, no retries, logged with the others.
 * A disabled endpoint is sent nothing, so it is refused now (ENDPOINT_DISABLED) rather than
 * queued and dropped.
 */
export async function redeliverEndpointEvent(env: Env, endpoint: Pick<WebhookEndpoint, "id" | "enabled">, eventId: string): Promise<boolean> {
  const endpointId = endpoint.id;
  const event = await findEndpointEvent(env.DB, endpointId, eventId);
  if (!event) return false;
  if (!endpoint.enabled) {
    throw new AppError("ENDPOINT_DISABLED", `Endpoint '${endpointId}' is disabled, so nothing was sent; enable it (PATCH with {"enabled": true}) and redeliver again.`, { endpoint_id: endpointId });
  }
  await endpointReceiverStub(env, endpointId).accept({ endpoint_id: endpointId, event, first_attempt_at: new Date().toISOString(), redelivery: true } satisfies EndpointHandover);
  return true;
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
