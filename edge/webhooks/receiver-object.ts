import { DurableObject } from "cloudflare:workers";
import { config } from "../lib/config";
import { deliverOnce } from "./deliver";
import { retryDelaySeconds } from "./retry";

interface Pending {
  body: unknown;
  /** Attempts made so far (a queue redelivery of the hand-over counts as one). */
  attempts: number;
  due: number;
}

/** Attempts one receiver gets at once; the rest wait for the next alarm. */
const MAX_PARALLEL = 10;

/**
 * One per receiver (a webhook URL): the events of a receiver that answers
 * slowly or not at all, delivered and retried on this object's own alarm, so that receiver's
 * timeouts and backoff hold up nobody else's deliveries. The queue consumer hands every event
 * to its receiver's object and moves on.
 */
export class WebhookReceiverObject extends DurableObject<Env> {
  /** Takes over an event; `id` (the queue message's) makes a repeated hand-over a no-op. */
  async accept(id: string, body: unknown, attempts: number): Promise<void> {
    const key = `event:${id}`;
    if (await this.ctx.storage.get(key)) return;
    await this.ctx.storage.put(key, { body, attempts, due: Date.now() } satisfies Pending);
    await this.arm();
  }

  async pending(): Promise<number> {
    return (await this.ctx.storage.list({ prefix: "event:" })).size;
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    const due = [...(await this.ctx.storage.list<Pending>({ prefix: "event:" }))].filter(([, event]) => event.due <= now).slice(0, MAX_PARALLEL);
    await Promise.all(due.map(async ([key, event]) => {
      const attempt = event.attempts + 1;
      let retryAfterSeconds: number | undefined;
      try {
        ({ retryAfterSeconds } = await deliverOnce(this.env, event.body, attempt));
      } catch (error) {
        console.error(JSON.stringify({ msg: "webhook delivery error", body: event.body, error: String(error) }));
        retryAfterSeconds = retryDelaySeconds(attempt, config(this.env).webhookRetryScheduleSeconds);
      }
      if (retryAfterSeconds === undefined) await this.ctx.storage.delete(key);
      else await this.ctx.storage.put(key, { ...event, attempts: attempt, due: Date.now() + retryAfterSeconds * 1000 } satisfies Pending);
    }));
    await this.arm();
  }

  private async arm(): Promise<void> {
    const events = [...(await this.ctx.storage.list<Pending>({ prefix: "event:" })).values()];
    if (events.length === 0) return this.ctx.storage.deleteAlarm();
    await this.ctx.storage.setAlarm(Math.max(Date.now(), Math.min(...events.map((event) => event.due))));
  }
}
