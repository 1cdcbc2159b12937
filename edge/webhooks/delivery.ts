import { AppError } from "../../shared/errors";
import { checkFetchUrl } from "../../shared/net/url-policy";
import type { WebhookDelivery, WebhookHandover } from "../../shared/schemas/webhooks";
import { config } from "../lib/config";
import { guardedFetch } from "../lib/guarded-fetch";
import { log } from "../lib/log";
import { signedHeaders, signingSecrets } from "./signing";

/** Retries go on until this long after the first attempt (Standard Webhooks' and peers' norm). */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A bound on one event's attempts, far past what the 24 h window needs (11 or 12), should the schedule be shortened. */
export const MAX_DELIVERY_ATTEMPTS = 100;
/** The longest pause between two attempts, so a receiver that comes back is tried again the same day. */
const MAX_DELAY_SECONDS = 12 * 60 * 60;
const USER_AGENT = "ffedge-webhooks/1";

/** The `attempts`-th attempt at a handed-over event; says whether and when to retry. */
export async function deliverOnce(env: Env, handover: WebhookHandover, attempts: number): Promise<{ retryAfterSeconds?: number }> {
  const { task_id, user_id, url, event, first_attempt_at, redelivery } = handover;
  if (!url) return {};
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

/**
 * Delay before the retry that follows failed attempt `attempt` (1-based): the schedule's entry,
 * its last entry once past the end, with ±20 % jitter so that many receivers failing together
 * are not retried in lockstep.
 */
export function retryDelaySeconds(attempt: number, schedule: readonly number[], random: () => number = Math.random): number {
  const base = schedule[Math.min(Math.max(attempt, 1), schedule.length) - 1]!;
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  return Math.min(MAX_DELAY_SECONDS, Math.max(1, jittered));
}

/** True once 24 h have passed since the first attempt, or the event has had MAX_DELIVERY_ATTEMPTS attempts. */
export function retriesExhausted(firstAttemptAt: string, attempt: number, now = Date.now()): boolean {
  return now - Date.parse(firstAttemptAt) >= RETRY_WINDOW_MS || attempt >= MAX_DELIVERY_ATTEMPTS;
}

/**
 * A webhook URL must pass the guarded fetcher's policy and use https: event bodies carry
 * output URLs and errors, and must not cross the network in clear. Plain http is left only to
 * the development allow-list (a receiver on 127.0.0.1 in tests), which is empty in production.
 */
export function checkWebhookUrl(raw: string, allowHosts: readonly string[]): URL {
  const url = checkFetchUrl(raw, { allowHosts });
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (url.protocol !== "https:" && !allowHosts.includes(host)) {
    throw new AppError("URL_NOT_ALLOWED", "Webhook URLs must use https.");
  }
  return url;
}

export interface AttemptOutcome {
  statusCode: number | null;
  latencyMs: number | null;
  success: boolean;
  error: string | null;
  /** The URL itself is refused: retrying cannot help. */
  refused: boolean;
}

/**
 * One POST of an event. Only a 2xx counts; a 3xx is a failure and is never followed (a
 * redirect could point anywhere, including at addresses the URL policy blocks). The URL is
 * checked again here because the policy may have changed since the task was submitted.
 * `secrets` is only called once the URL has passed, so a refused URL creates no secret.
 */
export async function sendEvent(env: Env, rawUrl: string, event: { id: string; type: string; body: string }, secrets: () => Promise<string[]>): Promise<AttemptOutcome> {
  const settings = config(env);
  let url: URL;
  try {
    url = checkWebhookUrl(rawUrl, settings.devFetchAllowHosts);
  } catch (error) {
    if (error instanceof AppError) return { statusCode: null, latencyMs: null, success: false, error: `${error.code}: ${error.detail}`, refused: true };
    throw error;
  }
  const headers = { ...signedHeaders(await secrets(), event.id, event.body, new Date()), "webhook-event": event.type, "content-type": "application/json", "user-agent": USER_AGENT };
  const started = Date.now();
  try {
    const { response } = await guardedFetch(env, url.toString(), { method: "POST", headers, body: event.body, timeoutMs: settings.webhookTimeoutSeconds * 1000, followRedirects: false });
    await response.body?.cancel();
    const latencyMs = Date.now() - started;
    if (response.status >= 200 && response.status < 300) return { statusCode: response.status, latencyMs, success: true, error: null, refused: false };
    return { statusCode: response.status, latencyMs, success: false, error: describeStatus(response.status), refused: false };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { statusCode: null, latencyMs: Date.now() - started, success: false, error: `${error.code}: ${error.detail}`, refused: error.status === 400 };
  }
}

function describeStatus(status: number): string {
  if (status >= 300 && status < 400) return `The receiver answered ${status}; redirects are not followed.`;
  return `The receiver answered ${status}; only 2xx counts as delivered.`;
}

export interface AttemptRecord {
  webhookId: string;
  taskId: string;
  userId: string;
  redelivery: boolean;
  url: string;
  attemptedAt: string;
  statusCode: number | null;
  latencyMs: number | null;
  success: boolean;
  error: string | null;
}

interface DeliveryRow {
  attempt: number;
  attempted_at: string;
  redelivery: number;
  status_code: number | null;
  latency_ms: number | null;
  success: number;
  error: string | null;
}

/** Records one attempt; attempts are numbered per event, across retries and redeliveries. Returns its number. */
export async function recordAttempt(db: D1Database, record: AttemptRecord): Promise<number> {
  const row = await db
    .prepare(
      `INSERT INTO webhook_deliveries (webhook_id, task_id, user_id, attempt, redelivery, url, attempted_at, status_code, latency_ms, success, error)
       SELECT ?1, ?2, ?3, COALESCE(MAX(attempt), 0) + 1, ?4, ?5, ?6, ?7, ?8, ?9, ?10 FROM webhook_deliveries WHERE webhook_id = ?1
       RETURNING attempt`,
    )
    .bind(record.webhookId, record.taskId, record.userId, record.redelivery ? 1 : 0, record.url, record.attemptedAt, record.statusCode, record.latencyMs, record.success ? 1 : 0, record.error)
    .first<{ attempt: number }>();
  return row!.attempt;
}

/** A task's delivery attempts, oldest first. The caller has already checked the task is the user's. */
export async function listDeliveries(db: D1Database, taskId: string): Promise<WebhookDelivery[]> {
  const { results } = await db
    .prepare("SELECT attempt, attempted_at, redelivery, status_code, latency_ms, success, error FROM webhook_deliveries WHERE task_id = ? ORDER BY attempt")
    .bind(taskId)
    .all<DeliveryRow>();
  return results.map((row) => ({ ...row, redelivery: row.redelivery === 1, success: row.success === 1 }));
}

/** Every delivery attempt recorded for the user (erasing the account); a statement, for batches. */
export function deleteUserDeliveriesStatement(db: D1Database, userId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM webhook_deliveries WHERE user_id = ?").bind(userId);
}

/** An SQL condition for statements on `tasks` (aliased `tasks`): a delivery attempt of the task's webhook is on record. */
export const TASK_HAS_DELIVERIES = "EXISTS (SELECT 1 FROM webhook_deliveries WHERE webhook_deliveries.task_id = tasks.id)";
