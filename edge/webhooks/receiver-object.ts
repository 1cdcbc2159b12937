import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { type EndpointHandover, EndpointHandoverSchema, ProgressHandoverSchema, type WebhookHandover, WebhookHandoverSchema } from "../../shared/schemas/webhooks";
import { config } from "../lib/config";
import { log } from "../lib/log";
import { deliverOnce, retryDelaySeconds } from "./delivery";
import { deliverToEndpoint } from "./endpoint-delivery";
import { ProgressSlots } from "./progress-slots";

/** A task's own webhook, or a registered endpoint (its receiver is the endpoint, whatever its URL). */
const HandoverSchema = z.union([EndpointHandoverSchema, WebhookHandoverSchema]);
type Handover = WebhookHandover | EndpointHandover;

interface Pending {
  handover: Handover;
  /** Attempts made so far. */
  attempts: number;
  due: number;
}

/** Attempts one receiver gets at once; the rest wait for the next alarm. */
const MAX_PARALLEL = 10;
/** Beyond the receiver's timeout: an attempt under way holds its event this long, after which the alarm takes it over. */
const ATTEMPT_LEASE_EXTRA_MS = 45_000;

/**
 * One per receiver (a webhook URL): the events of a receiver that answers slowly or not at
 * all, delivered and retried on this object's own alarm, so that receiver's timeouts and
 * backoff hold up nobody else's deliveries. The task's Durable Object hands each end event
 * here and moves on: `accept` stores it and starts its first attempt without waiting for it
 * (so a delivery that works at once costs no alarm); the alarm makes the retries, and takes
 * over a first attempt that never finished (the object was evicted in the middle of it).
 */
export class WebhookReceiverObject extends DurableObject<Env> {
  private readonly progress = new ProgressSlots(this.ctx, this.env);

  /**
   * Takes over an event. A repeated hand-over of an event still pending here (the task's
   * outbox retried, or the cron's sweep) changes nothing; each redelivery is an attempt of its own.
   */
  async accept(body: unknown): Promise<void> {
    const parsed = HandoverSchema.safeParse(body);
    if (!parsed.success) {
      log.error("dropping malformed webhook hand-over", { body });
      return;
    }
    const handover = parsed.data;
    const key = handover.redelivery ? `event:${handover.event.id}:redelivery:${handover.first_attempt_at}` : `event:${handover.event.id}`;
    if (await this.ctx.storage.get(key)) return;
    // Stored already leased to the first attempt, which starts now: one write, not two.
    const event: Pending = { handover, attempts: 0, due: this.leaseEnd() };
    await this.ctx.storage.put(key, event);
    const ended = "endpoint_id" in handover && handover.task_id && handover.event.type !== "task.progress" ? this.progress.end(handover.task_id) : undefined;
    // A task's end goes out after its progress attempt under way, if any, so no progress follows it;
    // should clearing its progress slot fail, the end is attempted all the same: the end matters more than the order.
    this.ctx.waitUntil(Promise.resolve(ended).catch(() => undefined).then(() => this.attempt(key, event, true)).then(() => this.arm()));
    await this.arm();
  }

  /** Takes a running task's progress event for this endpoint (./progress-slots.ts). */
  async offerProgress(body: unknown): Promise<void> {
    const parsed = ProgressHandoverSchema.safeParse(body);
    if (!parsed.success) {
      log.error("dropping malformed progress hand-over", { body });
      return;
    }
    await this.progress.offer(parsed.data);
  }

  async pending(): Promise<number> {
    return (await this.ctx.storage.list({ prefix: "event:" })).size;
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    const due = [...(await this.ctx.storage.list<Pending>({ prefix: "event:" }))].filter(([, event]) => event.due <= now).slice(0, MAX_PARALLEL);
    await Promise.all(due.map(([key, event]) => this.attempt(key, event)));
    await this.arm();
  }

  /** One attempt at a stored event; it holds the event (a lease) while under way, then records when to retry, if ever. */
  private async attempt(key: string, event: Pending, leased = false): Promise<void> {
    const settings = config(this.env);
    if (!leased) await this.ctx.storage.put(key, { ...event, due: this.leaseEnd() } satisfies Pending);
    const attempt = event.attempts + 1;
    let retryAfterSeconds: number | undefined;
    try {
      ({ retryAfterSeconds } = await deliverTo(this.env, event.handover, attempt));
    } catch (error) {
      log.error("webhook delivery error", { webhook_id: event.handover.event.id, error });
      retryAfterSeconds = retryDelaySeconds(attempt, settings.webhookRetryScheduleSeconds);
    }
    if (retryAfterSeconds === undefined) await this.ctx.storage.delete(key);
    else await this.ctx.storage.put(key, { ...event, attempts: attempt, due: Date.now() + retryAfterSeconds * 1000 } satisfies Pending);
  }

  /** Until when an attempt starting now holds its event: the receiver's timeout and a margin. */
  private leaseEnd(): number {
    return Date.now() + config(this.env).webhookTimeoutSeconds * 1000 + ATTEMPT_LEASE_EXTRA_MS;
  }

  private async arm(): Promise<void> {
    const events = [...(await this.ctx.storage.list<Pending>({ prefix: "event:" })).values()];
    if (events.length === 0) return this.ctx.storage.deleteAlarm();
    await this.ctx.storage.setAlarm(Math.max(Date.now(), Math.min(...events.map((event) => event.due))));
  }
}

function deliverTo(env: Env, handover: Handover, attempt: number): Promise<{ retryAfterSeconds?: number }> {
  return "endpoint_id" in handover ? deliverToEndpoint(env, handover, attempt) : deliverOnce(env, handover, attempt);
}
