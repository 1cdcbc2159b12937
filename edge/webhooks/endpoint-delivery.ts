import type { EndpointHandover } from "../../shared/schemas/webhooks";
import { config } from "../lib/config";
import { log } from "../lib/log";
import { retriesExhausted, retryDelaySeconds, sendEvent } from "./delivery";
import { recordEndpointAttempt } from "./endpoint-log";
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
