import type { EndpointHandover, ProgressHandover } from "../../shared/schemas/webhooks";
import { config } from "../lib/config";
import { log } from "../lib/log";
import { retriesExhausted, retryDelaySeconds, sendEvent } from "./delivery";
import { recordEndpointAttempt, recordEvents } from "./endpoint-log";
import { endpointSecrets, endpointTarget } from "./endpoints";

/**
 * The `attempts`-th attempt at an event for a registered endpoint. The endpoint is read now:
 * a deleted one drops the event, a disabled one drops it with the reason in its log, a new URL
 * or secret applies from this attempt on. Retries as a task's webhook does.
 */
export async function deliverToEndpoint(env: Env, handover: EndpointHandover, attempts: number): Promise<{ retryAfterSeconds?: number }> {
  const { endpoint_id, event, first_attempt_at, redelivery } = handover;
  const target = await endpointTarget(env.DB, endpoint_id);
  if (!target) return {};
  const attemptedAt = new Date().toISOString();
  const record = { endpointId: endpoint_id, eventId: event.id, redelivery, attemptedAt };
  if (!target.enabled) {
    await recordEndpointAttempt(env.DB, { ...record, statusCode: null, latencyMs: null, success: false, error: "The endpoint is disabled; the event was dropped." });
    return {};
  }
  const outcome = await sendEvent(env, target.url, event, () => endpointSecrets(env, endpoint_id));
  const attempt = await recordEndpointAttempt(env.DB, { ...record, statusCode: outcome.statusCode, latencyMs: outcome.latencyMs, success: outcome.success, error: outcome.error });
  if (outcome.success || outcome.refused || redelivery || attempt === undefined) return {};
  if (retriesExhausted(first_attempt_at, attempts)) {
    log.error("webhook endpoint delivery abandoned", { endpoint_id, webhook_id: event.id, attempt });
    return {};
  }
  return { retryAfterSeconds: retryDelaySeconds(attempts, config(env).webhookRetryScheduleSeconds) };
}

/**
 * The one attempt at a progress event: no retries (the next progress event supersedes it). Only
 * a failure goes into the endpoint's log, so a task's ten progress events do not push the end
 * events out of its last 100. Dropped unsent if the endpoint is gone, disabled or unsubscribed.
 */
export async function deliverProgressToEndpoint(env: Env, handover: ProgressHandover, now = new Date()): Promise<void> {
  const { endpoint_id, event, task_id } = handover;
  const target = await endpointTarget(env.DB, endpoint_id);
  if (!target?.enabled || !target.events.includes("task.progress")) return;
  const outcome = await sendEvent(env, target.url, event, () => endpointSecrets(env, endpoint_id));
  if (outcome.success) return;
  await recordEvents(env.DB, [endpoint_id], { task_id, ...event }, now);
  await recordEndpointAttempt(env.DB, {
    endpointId: endpoint_id, eventId: event.id, redelivery: false, attemptedAt: now.toISOString(), statusCode: outcome.statusCode, latencyMs: outcome.latencyMs, success: false, error: outcome.error,
  });
}
