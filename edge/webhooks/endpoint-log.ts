import type { EndpointEventLog, EndpointEventType } from "../../shared/schemas/webhooks";

/** Events (and their attempts) older than this leave the log: the cron prunes them. */
export const ENDPOINT_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const LOG_PAGE = 100;

/** An event for a user's endpoints, as its source (the task core, the file sweep) builds it. */
export interface EndpointEvent {
  user_id: string;
  task_id: string | null;
  id: string;
  type: EndpointEventType;
  body: string;
}

/** Records `event` for each endpoint; an event already on record for one stays as it was. */
export async function recordEvents(db: D1Database, endpointIds: readonly string[], event: Omit<EndpointEvent, "user_id">, now: Date): Promise<void> {
  if (endpointIds.length === 0) return;
  await db.batch(
    endpointIds.map((endpointId) =>
      db.prepare("INSERT OR IGNORE INTO webhook_endpoint_events (endpoint_id, event_id, type, task_id, body, created_at) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(endpointId, event.id, event.type, event.task_id, event.body, now.toISOString()),
    ),
  );
}

/** Of `endpointIds`, those with no attempt at the event yet: the ones a repeated fan-out hands it to again. */
export async function endpointsWithoutAttempts(db: D1Database, endpointIds: readonly string[], eventId: string): Promise<string[]> {
  if (endpointIds.length === 0) return [];
  const { results } = await db
    .prepare(
      `SELECT endpoint_id FROM webhook_endpoint_events WHERE event_id = ? AND endpoint_id IN (${endpointIds.map(() => "?").join(",")})
       AND NOT EXISTS (SELECT 1 FROM webhook_endpoint_attempts WHERE webhook_endpoint_attempts.endpoint_id = webhook_endpoint_events.endpoint_id AND webhook_endpoint_attempts.event_id = webhook_endpoint_events.event_id)`,
    )
    .bind(eventId, ...endpointIds)
    .all<{ endpoint_id: string }>();
  return results.map((row) => row.endpoint_id);
}

/** The recorded event, to send again; null if the endpoint never had it (or it was pruned). */
export async function findEndpointEvent(db: D1Database, endpointId: string, eventId: string): Promise<{ id: string; type: EndpointEventType; body: string } | null> {
  return db.prepare("SELECT event_id AS id, type, body FROM webhook_endpoint_events WHERE endpoint_id = ? AND event_id = ?").bind(endpointId, eventId).first<{ id: string; type: EndpointEventType; body: string }>();
}

export interface EndpointAttemptRecord {
  endpointId: string;
  eventId: string;
  redelivery: boolean;
  attemptedAt: string;
  statusCode: number | null;
  latencyMs: number | null;
  success: boolean;
  error: string | null;
}

/** Records one attempt, numbered per endpoint and event across retries and redeliveries; nothing if the event is gone with its endpoint. */
export async function recordEndpointAttempt(db: D1Database, record: EndpointAttemptRecord): Promise<number | undefined> {
  const row = await db
    .prepare(
      `INSERT INTO webhook_endpoint_attempts (endpoint_id, event_id, attempt, redelivery, attempted_at, status_code, latency_ms, success, error)
       SELECT ?1, ?2, (SELECT COALESCE(MAX(attempt), 0) + 1 FROM webhook_endpoint_attempts WHERE endpoint_id = ?1 AND event_id = ?2), ?3, ?4, ?5, ?6, ?7, ?8
       FROM webhook_endpoint_events WHERE endpoint_id = ?1 AND event_id = ?2
       RETURNING attempt`,
    )
    .bind(record.endpointId, record.eventId, record.redelivery ? 1 : 0, record.attemptedAt, record.statusCode, record.latencyMs, record.success ? 1 : 0, record.error)
    .first<{ attempt: number }>();
  return row?.attempt;
}

interface LogRow {
  event_id: string;
  type: EndpointEventType;
  task_id: string | null;
  created_at: string;
  attempt: number | null;
  attempted_at: string | null;
  redelivery: number | null;
  status_code: number | null;
  latency_ms: number | null;
  success: number | null;
  error: string | null;
}

/** The endpoint's last 100 events, newest first, each with its attempts, oldest first. */
export async function listEndpointEvents(db: D1Database, endpointId: string): Promise<EndpointEventLog[]> {
  const { results } = await db
    .prepare(
      `SELECT e.event_id, e.type, e.task_id, e.created_at, a.attempt, a.attempted_at, a.redelivery, a.status_code, a.latency_ms, a.success, a.error
       FROM (SELECT * FROM webhook_endpoint_events WHERE endpoint_id = ?1 ORDER BY created_at DESC, event_id LIMIT ?2) AS e
       LEFT JOIN webhook_endpoint_attempts AS a ON a.endpoint_id = e.endpoint_id AND a.event_id = e.event_id
       ORDER BY e.created_at DESC, e.event_id, a.attempt`,
    )
    .bind(endpointId, LOG_PAGE)
    .all<LogRow>();
  const events = new Map<string, EndpointEventLog>();
  for (const row of results) {
    let event = events.get(row.event_id);
    if (!event) {
      event = { event_id: row.event_id, type: row.type, task_id: row.task_id, created_at: row.created_at, delivered: false, attempts: [] };
      events.set(row.event_id, event);
    }
    if (row.attempt === null) continue;
    const success = row.success === 1;
    event.delivered ||= success;
    event.attempts.push({ attempt: row.attempt, attempted_at: row.attempted_at!, redelivery: row.redelivery === 1, status_code: row.status_code, latency_ms: row.latency_ms, success, error: row.error });
  }
  return [...events.values()];
}

/** Forgets events (and their attempts) recorded before `before`. */
export async function pruneEndpointEvents(db: D1Database, before: Date): Promise<void> {
  const cutoff = before.toISOString();
  await db.batch([
    db.prepare(
      `DELETE FROM webhook_endpoint_attempts WHERE EXISTS (SELECT 1 FROM webhook_endpoint_events WHERE webhook_endpoint_events.endpoint_id = webhook_endpoint_attempts.endpoint_id
       AND webhook_endpoint_events.event_id = webhook_endpoint_attempts.event_id AND webhook_endpoint_events.created_at < ?)`,
    ).bind(cutoff),
    db.prepare("DELETE FROM webhook_endpoint_events WHERE created_at < ?").bind(cutoff),
  ]);
}

/**
 * An SQL condition inside a statement on `webhook_endpoints` and `tasks`: the endpoint has a
 * record of the task's end event (a logged progress event of the task does not count).
 */
export const ENDPOINT_HAS_TASK_EVENT = `EXISTS (SELECT 1 FROM webhook_endpoint_events WHERE webhook_endpoint_events.endpoint_id = webhook_endpoints.id
  AND webhook_endpoint_events.task_id = tasks.id AND webhook_endpoint_events.type = 'task.' || tasks.status)`;
