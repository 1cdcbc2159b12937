import { WebhookMessageSchema } from "../../shared/schemas/webhooks";
import { config } from "../lib/config";
import { findTaskById } from "../tasks/repository";
import { recordAttempt } from "./deliveries";
import { taskEvent } from "./event";
import { retriesExhausted, retryDelaySeconds } from "./retry";
import { signingSecrets } from "./secrets";
import { sendEvent } from "./send";

/** One attempt for a message delivered for the `attempts`-th time; says whether and when to retry. */
export async function deliverOnce(env: Env, body: unknown, attempts: number): Promise<{ retryAfterSeconds?: number }> {
  const parsed = WebhookMessageSchema.safeParse(body);
  if (!parsed.success) {
    console.error(JSON.stringify({ msg: "dropping malformed webhook message", body }));
    return {};
  }
  const { task_id, first_attempt_at, redelivery } = parsed.data;
  const row = await findTaskById(env.DB, task_id);
  const event = row ? taskEvent(env, row) : undefined;
  if (!row?.webhook_url || !event) {
    console.error(JSON.stringify({ msg: "dropping webhook message for a task without an ended event", task_id }));
    return {};
  }
  const attemptedAt = new Date().toISOString();
  const outcome = await sendEvent(env, row.webhook_url, event, () => signingSecrets(env, row.user_id));
  const attempt = await recordAttempt(env.DB, {
    webhookId: event.id, taskId: row.id, userId: row.user_id, redelivery, url: row.webhook_url, attemptedAt,
    statusCode: outcome.statusCode, latencyMs: outcome.latencyMs, success: outcome.success, error: outcome.error,
  });
  if (outcome.success || outcome.refused || redelivery) return {};
  if (retriesExhausted(first_attempt_at, attempts)) {
    console.error(JSON.stringify({ msg: "webhook delivery abandoned", task_id, webhook_id: event.id, attempt }));
    return {};
  }
  return { retryAfterSeconds: retryDelaySeconds(attempts, config(env).webhookRetryScheduleSeconds) };
}
