import type { WebhookDelivery } from "../../shared/schemas/webhooks";

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
