import { randomHex } from "../../shared/encoding";
import { AppError } from "../../shared/errors";
import {
  type EndpointEventType, MAX_ENDPOINTS_PER_USER, type WebhookEndpoint, type WebhookEndpointCreate, type WebhookEndpointUpdate,
} from "../../shared/schemas/webhooks";
import { config } from "../lib/config";
import { checkWebhookUrl } from "./delivery";
import { ENDPOINT_HAS_TASK_EVENT } from "./endpoint-log";
import { ROTATION_OVERLAP_MS, decrypt, encrypt, newSecret } from "./signing";

interface EndpointRow {
  id: string;
  user_id: string;
  url: string;
  events: string;
  description: string | null;
  enabled: number;
  created_at: string;
  updated_at: string;
}

const COLUMNS = "id, user_id, url, events, description, enabled, created_at, updated_at";

function present(row: EndpointRow): WebhookEndpoint {
  return { id: row.id, url: row.url, events: JSON.parse(row.events), description: row.description, enabled: row.enabled === 1, created_at: row.created_at, updated_at: row.updated_at };
}

/** The same policy as a task's webhook (public host, https), checked when saved and again at each attempt. */
function checkUrl(env: Env, url: string): string {
  return checkWebhookUrl(url, config(env).devFetchAllowHosts).toString();
}

/**
 * Registers an endpoint with its first signing secret, returned here only. The count of the
 * user's endpoints is checked in the insert itself, so two racing creations cannot pass the cap.
 */
export async function createEndpoint(env: Env, userId: string, input: WebhookEndpointCreate, now = new Date()): Promise<WebhookEndpoint & { secret: string }> {
  const url = checkUrl(env, input.url);
  const id = `whe_${randomHex(12)}`;
  const secretId = `wes_${randomHex(12)}`;
  const secret = newSecret();
  const ciphertext = await encrypt(env, id, secretId, secret);
  const at = now.toISOString();
  const events = JSON.stringify([...new Set(input.events)]);
  const [inserted] = await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO webhook_endpoints (${COLUMNS}) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7
       WHERE (SELECT COUNT(*) FROM webhook_endpoints WHERE user_id = ?2) < ?8`,
    ).bind(id, userId, url, events, input.description ?? null, input.enabled ? 1 : 0, at, MAX_ENDPOINTS_PER_USER),
    env.DB.prepare("INSERT INTO webhook_endpoint_secrets (id, endpoint_id, ciphertext, created_at) SELECT ?, id, ?, ? FROM webhook_endpoints WHERE id = ?").bind(secretId, ciphertext, at, id),
  ]);
  if (!inserted?.meta.changes) throw new AppError("ENDPOINT_LIMIT_REACHED", `A user can register at most ${MAX_ENDPOINTS_PER_USER} webhook endpoints; delete one first.`);
  return { ...(await requireOwnEndpoint(env.DB, userId, id)), secret };
}

export async function listEndpoints(db: D1Database, userId: string): Promise<WebhookEndpoint[]> {
  const { results } = await db.prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE user_id = ? ORDER BY created_at, id`).bind(userId).all<EndpointRow>();
  return results.map(present);
}

/** The user's endpoint; another user's is as unknown as one that never existed. */
export async function requireOwnEndpoint(db: D1Database, userId: string, endpointId: string): Promise<WebhookEndpoint> {
  const row = await db.prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = ? AND user_id = ?`).bind(endpointId, userId).first<EndpointRow>();
  if (!row) throw new AppError("NOT_FOUND", `There is no webhook endpoint '${endpointId}'.`);
  return present(row);
}

export async function updateEndpoint(env: Env, userId: string, endpointId: string, update: WebhookEndpointUpdate, now = new Date()): Promise<WebhookEndpoint> {
  const current = await requireOwnEndpoint(env.DB, userId, endpointId);
  const url = update.url === undefined ? current.url : checkUrl(env, update.url);
  const events = JSON.stringify(update.events ? [...new Set(update.events)] : current.events);
  const description = update.description === undefined ? current.description : update.description;
  const enabled = update.enabled ?? current.enabled;
  await env.DB.prepare("UPDATE webhook_endpoints SET url = ?, events = ?, description = ?, enabled = ?, updated_at = ? WHERE id = ? AND user_id = ?")
    .bind(url, events, description, enabled ? 1 : 0, now.toISOString(), endpointId, userId)
    .run();
  return requireOwnEndpoint(env.DB, userId, endpointId);
}

/** Deletes the endpoint, its secrets and its log (the foreign keys cascade); events waiting in its receiver are dropped at their next attempt. */
export async function deleteEndpoint(db: D1Database, userId: string, endpointId: string): Promise<void> {
  const result = await db.prepare("DELETE FROM webhook_endpoints WHERE id = ? AND user_id = ?").bind(endpointId, userId).run();
  if (!result.meta.changes) throw new AppError("NOT_FOUND", `There is no webhook endpoint '${endpointId}'.`);
}

/** Replaces the endpoint's secret and returns the new one, shown only here; the replaced one keeps signing for 24 h. */
export async function rotateEndpointSecret(env: Env, userId: string, endpointId: string, now = new Date()): Promise<{ secret: string; created_at: string; previous_valid_until: string | null }> {
  await requireOwnEndpoint(env.DB, userId, endpointId);
  const nowIso = now.toISOString();
  const id = `wes_${randomHex(12)}`;
  const secret = newSecret();
  const ciphertext = await encrypt(env, endpointId, id, secret);
  await env.DB.batch([
    env.DB.prepare("DELETE FROM webhook_endpoint_secrets WHERE endpoint_id = ? AND expires_at <= ?").bind(endpointId, nowIso),
    env.DB.prepare("UPDATE webhook_endpoint_secrets SET expires_at = ? WHERE endpoint_id = ? AND expires_at IS NULL").bind(new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString(), endpointId),
    env.DB.prepare("INSERT INTO webhook_endpoint_secrets (id, endpoint_id, ciphertext, created_at) VALUES (?, ?, ?, ?)").bind(id, endpointId, ciphertext, nowIso),
  ]);
  const previous = await env.DB.prepare("SELECT MAX(expires_at) AS until FROM webhook_endpoint_secrets WHERE endpoint_id = ? AND expires_at > ?")
    .bind(endpointId, nowIso)
    .first<{ until: string | null }>();
  return { secret, created_at: nowIso, previous_valid_until: previous?.until ?? null };
}

/** The secrets that sign the endpoint's deliveries now, newest first: the current one and those rotated out less than 24 h ago. */
export async function endpointSecrets(env: Env, endpointId: string, now = new Date()): Promise<string[]> {
  const { results } = await env.DB.prepare(
    "SELECT id, ciphertext FROM webhook_endpoint_secrets WHERE endpoint_id = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY expires_at IS NULL DESC, created_at DESC",
  )
    .bind(endpointId, now.toISOString())
    .all<{ id: string; ciphertext: string }>();
  return Promise.all(results.map((row) => decrypt(env, endpointId, row)));
}

/** Where and whether an endpoint receives, read at each attempt; null once it is deleted. */
export async function endpointTarget(db: D1Database, endpointId: string): Promise<{ url: string; enabled: boolean; events: EndpointEventType[] } | null> {
  const row = await db.prepare("SELECT url, enabled, events FROM webhook_endpoints WHERE id = ?").bind(endpointId).first<{ url: string; enabled: number; events: string }>();
  return row ? { url: row.url, enabled: row.enabled === 1, events: JSON.parse(row.events) } : null;
}

/** A user's enabled endpoints and what each is subscribed to. */
export type OwnerEndpoints = { id: string; events: EndpointEventType[] }[];

/**
 * An SQL expression for a statement on `tasks` (aliased `tasks`) that returns rows: the task
 * owner's enabled endpoints as JSON, for `ownerEndpoints`. The task core adds it to the writes
 * it makes anyway when a task starts and ends, so learning who is subscribed costs no query of
 * its own, and the end's list is exactly as fresh as the end itself.
 */
export const OWNER_ENDPOINTS_JSON = `(SELECT json_group_array(json_object('id', webhook_endpoints.id, 'events', json(webhook_endpoints.events)))
  FROM webhook_endpoints WHERE webhook_endpoints.user_id = tasks.user_id AND webhook_endpoints.enabled = 1)`;

export function ownerEndpoints(json: string | null | undefined): OwnerEndpoints {
  return json ? JSON.parse(json) : [];
}

/** Of the owner's endpoints, those subscribed to `type`, in id order (as `subscribedEndpoints`). */
export function endpointsFor(endpoints: OwnerEndpoints, type: EndpointEventType): string[] {
  return endpoints.filter((endpoint) => endpoint.events.includes(type)).map((endpoint) => endpoint.id).sort();
}

/** The user's enabled endpoints, read on their own (a running task's snapshot, refreshed). */
export async function listOwnerEndpoints(db: D1Database, userId: string): Promise<OwnerEndpoints> {
  const { results } = await db.prepare("SELECT id, events FROM webhook_endpoints WHERE user_id = ? AND enabled = 1").bind(userId).all<{ id: string; events: string }>();
  return results.map((row) => ({ id: row.id, events: JSON.parse(row.events) }));
}

/** The user's enabled endpoints subscribed to `type`. */
export async function subscribedEndpoints(db: D1Database, userId: string, type: EndpointEventType): Promise<string[]> {
  const { results } = await db
    .prepare("SELECT id FROM webhook_endpoints WHERE user_id = ? AND enabled = 1 AND EXISTS (SELECT 1 FROM json_each(webhook_endpoints.events) WHERE value = ?) ORDER BY id")
    .bind(userId, type)
    .all<{ id: string }>();
  return results.map((row) => row.id);
}

/**
 * An SQL condition for statements on `tasks` (aliased `tasks`), for the cron's sweep behind the
 * task's outbox: an enabled endpoint of the task's owner, unchanged since before the task ended
 * and subscribed to its end, has no record of its event (one changed since then, e.g. enabled
 * again, is not sent what it missed).
 */
export const TASK_EVENT_MISSING_AT_AN_ENDPOINT = `tasks.user_id IN (SELECT user_id FROM webhook_endpoints WHERE enabled = 1)
  AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE webhook_endpoints.user_id = tasks.user_id AND webhook_endpoints.enabled = 1
  AND webhook_endpoints.updated_at < tasks.finished_at
  AND EXISTS (SELECT 1 FROM json_each(webhook_endpoints.events) WHERE value = 'task.' || tasks.status)
  AND NOT ${ENDPOINT_HAS_TASK_EVENT})`;
