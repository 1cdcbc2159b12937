import type { WebhookHandover } from "../../shared/schemas/webhooks";
import { config } from "../lib/config";
import { log } from "../lib/log";
import { recordAttempt } from "./deliveries";
import { retriesExhausted, retryDelaySeconds } from "./retry";
import { signingSecrets } from "./secrets";
import { sendEvent } from "./send";

/** The `attempts`-th attempt at a handed-over event; says whether and when to retry. */
export async function deliverOnce(env: Env, handover: WebhookHandover, attempts: number): Promise<{ retryAfterSeconds?: number }> {
  const { task_id, user_id, url, event, first_attempt_at, redelivery } = handover;
  const attemptedAt = new Date().toISOString();
  const outcome = await sendEvent(env, url, event, () => signingSecrets(env, user_id));
  const attempt = await recordAttempt(env.DB, {
    webhookId: event.id, taskId: task_id, userId: user_id, redelivery, url, attemptedAt,
    statusCode: outcome.statusCode, latencyMs: outcome.latencyMs, success: outcome.success, error: outcome.error,
  });
  if (outcome.success || outcome.refused || redelivery) return {};
  if (retriesExhausted(first_attempt_at, attempts)) {
    log.error("webhook delivery abandoned", { task_id, webhook_id: event.id, attempt });
    return {};
  }
  return { retryAfterSeconds: retryDelaySeconds(attempts, config(env).webhookRetryScheduleSeconds) };
}
