import { AppError } from "../../shared/errors";
import type { TaskFailureCode } from "../../shared/errors";
import type { TaskStatus, TaskStatusFilter } from "../../shared/schemas/tasks";
import { deleteTaskFilesStatement } from "../files/records";
import { TASK_HAS_DELIVERIES } from "../webhooks/delivery";
import { OWNER_ENDPOINTS_JSON, type OwnerEndpoints, TASK_EVENT_MISSING_AT_AN_ENDPOINT, ownerEndpoints } from "../webhooks/endpoints";
import type { StoredOutput } from "./state";

/** A row of the `tasks` table. */
export interface TaskRow {
  id: string;
  user_id: string;
  /** A chained task's commands, one a line; its steps are in `steps`. */
  command: string;
  /** A chained task's steps as JSON (./steps.ts); null for a task of one command. */
  steps?: string | null;
  with_metadata: number;
  webhook_url: string | null;
  status: TaskStatus;
  progress: number;
  outputs: string | null;
  error: string | null;
  error_code: TaskFailureCode | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Times the task was started again after its transcoder was lost. */
  retries: number;
  /** The task's own time limit, reserved against its owner's daily quota (null: TASK_TIMEOUT_SECONDS). */
  time_limit_seconds?: number | null;
  /** The destination it delivers to as JSON {id, mode} (edge/tasks/deliveries.ts); null: none. */
  destination?: string | null;
  /** The finished task this one runs again (POST /v1/tasks/{id}/retry); null: submitted otherwise. */
  retry_of?: string | null;
}

/** Seconds ffmpeg ran (started → finished) for the tasks of user `?1` that finished since `?2`. */
const PROCESSED_SECONDS = "SELECT COALESCE(SUM((julianday(finished_at) - julianday(started_at)) * 86400.0), 0) FROM tasks WHERE user_id = ?1 AND finished_at >= ?2 AND started_at IS NOT NULL";
/** Seconds reserved by the unfinished tasks of user `?1`: each its time limit (`?3` for a task recorded without one). */
const RESERVED_SECONDS = "SELECT COALESCE(SUM(COALESCE(time_limit_seconds, ?3)), 0) FROM tasks WHERE user_id = ?1 AND status IN ('pending', 'running')";
/** The user's quota in use: processed today plus reserved (binds ?1 user, ?2 start of day, ?3 TASK_TIMEOUT_SECONDS). */
const QUOTA_USED = `(${PROCESSED_SECONDS}) + (${RESERVED_SECONDS})`;

/** A user's daily processing quota, as a new task is reserved against it. */
export interface QuotaReservation {
  /** Start of the current UTC day. */
  since: string;
  /** DAILY_TASK_SECONDS. */
  seconds: number;
  /** TASK_TIMEOUT_SECONDS: the longest a task may run, and the reservation of tasks recorded without a limit. */
  taskTimeoutSeconds: number;
  /** The limit the submission asked for, if lower. */
  requestedSeconds?: number;
}

/**
 * Inserts a new task, without any quota (tests and tools that seed tasks). Submissions go
 * through `insertTaskWithinQuota`.
 */
export async function insertTask(db: D1Database, row: Pick<TaskRow, "id" | "user_id" | "command" | "with_metadata" | "webhook_url" | "created_at">): Promise<void> {
  await db
    .prepare("INSERT INTO tasks (id, user_id, command, with_metadata, webhook_url, status, created_at) VALUES (?, ?, ?, ?, ?, 'pending', ?)")
    .bind(row.id, row.user_id, row.command, row.with_metadata, row.webhook_url, row.created_at)
    .run();
}

/**
 * Inserts a new task with its time limit reserved against the user's daily quota: the seconds
 * processed today plus every unfinished task's time limit. The task gets TASK_TIMEOUT_SECONDS
 * (or the lower limit it asked for), or what is left of the quota if that is less, and is
 * refused when less than a second is left.
 * One statement, so no other submission slips in between the check and the insert. Returns the
 * task's time limit in seconds, or undefined when the quota refused it.
 */
export async function insertTaskWithinQuota(
  db: D1Database,
  row: Pick<TaskRow, "id" | "user_id" | "command" | "steps" | "with_metadata" | "webhook_url" | "created_at" | "destination" | "retry_of">,
  quota: QuotaReservation,
): Promise<number | undefined> {
  const left = `CAST(?4 - (${QUOTA_USED}) AS INTEGER)`;
  const inserted = await db
    .prepare(
      `INSERT INTO tasks (id, user_id, command, with_metadata, webhook_url, status, created_at, time_limit_seconds, steps, destination, retry_of)
       SELECT ?5, ?1, ?6, ?7, ?8, 'pending', ?9, MIN(?10, ${left}), ?11, ?12, ?13 WHERE ${left} >= 1
       RETURNING time_limit_seconds`,
    )
    .bind(row.user_id, quota.since, quota.taskTimeoutSeconds, quota.seconds, row.id, row.command, row.with_metadata, row.webhook_url, row.created_at, Math.min(quota.requestedSeconds ?? quota.taskTimeoutSeconds, quota.taskTimeoutSeconds), row.steps ?? null, row.destination ?? null, row.retry_of ?? null)
    .first<{ time_limit_seconds: number }>();
  return inserted?.time_limit_seconds;
}

/** A task of this user, or 404: another user's task is indistinguishable from a missing one. */
export async function requireOwnTask(db: D1Database, userId: string, taskId: string): Promise<TaskRow> {
  const row = await findTask(db, userId, taskId);
  if (!row) throw new AppError("NOT_FOUND", `There is no task '${taskId}'.`);
  return row;
}

/** A task of this user, or null: another user's task is indistinguishable from a missing one. */
export async function findTask(db: D1Database, userId: string, taskId: string): Promise<TaskRow | null> {
  return db.prepare("SELECT * FROM tasks WHERE id = ? AND user_id = ?").bind(taskId, userId).first<TaskRow>();
}

/**
 * A page of the user's tasks, newest first. `canceled` is the failed tasks their owner canceled;
 * `failed` includes them, as their status says.
 */
export async function listTasks(db: D1Database, userId: string, query: { status?: TaskStatusFilter; limit: number; offset: number }): Promise<{ total: number; rows: TaskRow[] }> {
  const [where, params] =
    query.status === undefined ? ["user_id = ?", [userId]]
    : query.status === "canceled" ? ["user_id = ? AND status = 'failed' AND error_code = 'CANCELED'", [userId]]
    : ["user_id = ? AND status = ?", [userId, query.status]];
  const [count, page] = await db.batch<{ total: number } | TaskRow>([
    db.prepare(`SELECT COUNT(*) AS total FROM tasks WHERE ${where}`).bind(...params),
    db.prepare(`SELECT * FROM tasks WHERE ${where} ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`).bind(...params, query.limit, query.offset),
  ]);
  return { total: (count!.results[0] as { total: number }).total, rows: page!.results as TaskRow[] };
}

/** Returns the owner's endpoints as of the start, read by the same statement; undefined if the task was not pending. */
export async function markRunning(db: D1Database, taskId: string, startedAt: string): Promise<OwnerEndpoints | undefined> {
  const row = await db.prepare(`UPDATE tasks SET status = 'running', started_at = ? WHERE id = ? AND status = 'pending' RETURNING ${OWNER_ENDPOINTS_JSON} AS endpoints`).bind(startedAt, taskId).first<{ endpoints: string }>();
  return row ? ownerEndpoints(row.endpoints) : undefined;
}

/** The run was lost with its transcoder and the task waits to be started again. */
export async function markRetried(db: D1Database, taskId: string, retries: number): Promise<void> {
  await db.prepare("UPDATE tasks SET status = 'pending', started_at = NULL, progress = 0, retries = ? WHERE id = ? AND status IN ('pending', 'running')").bind(retries, taskId).run();
}

/** Tasks that have not ended and were created before `before`, oldest first: the reconciler's round. */
export async function listUnfinishedTaskIds(db: D1Database, before: string, limit: number): Promise<string[]> {
  const { results } = await db.prepare("SELECT id FROM tasks WHERE status IN ('pending', 'running') AND created_at <= ? ORDER BY created_at LIMIT ?").bind(before, limit).all<{ id: string }>();
  return results.map((row) => row.id);
}

/**
 * Tasks that ended with a webhook between `after` and `before` and have no delivery attempt on
 * record, oldest first: the webhook sweep's round (the partial index tasks_webhook_finished).
 */
export async function listUndeliveredWebhookTasks(db: D1Database, range: { after: string; before: string; limit: number }): Promise<TaskRow[]> {
  const { results } = await db
    .prepare(
      `SELECT * FROM tasks WHERE webhook_url IS NOT NULL AND finished_at > ? AND finished_at <= ?
       AND NOT ${TASK_HAS_DELIVERIES} ORDER BY finished_at LIMIT ?`,
    )
    .bind(range.after, range.before, range.limit)
    .all<TaskRow>();
  return results;
}

/** Tasks that ended in the range with an endpoint of their owner subscribed to their end but holding no record of it (the cron's sweep). */
export async function listTasksMissingEndpointEvents(db: D1Database, range: { after: string; before: string; limit: number }): Promise<TaskRow[]> {
  const { results } = await db
    .prepare(`SELECT * FROM tasks WHERE finished_at > ? AND finished_at <= ? AND status IN ('completed', 'failed') AND ${TASK_EVENT_MISSING_AT_AN_ENDPOINT} ORDER BY finished_at LIMIT ?`)
    .bind(range.after, range.before, range.limit)
    .all<TaskRow>();
  return results;
}

/** Writes an end state. Guarded so an end state is never overwritten. Returns the owner's endpoints as of the end, read by the same statement; undefined if it had already ended. */
export async function markFinished(
  db: D1Database,
  taskId: string,
  end: { status: "completed" | "failed"; progress: number; outputs: StoredOutput[] | null; error: string | null; error_code: TaskFailureCode | null; started_at: string | null; finished_at: string },
): Promise<OwnerEndpoints | undefined> {
  const row = await db
    .prepare(
      `UPDATE tasks SET status = ?, progress = ?, outputs = ?, error = ?, error_code = ?, started_at = COALESCE(started_at, ?), finished_at = ?
       WHERE id = ? AND status IN ('pending', 'running') RETURNING ${OWNER_ENDPOINTS_JSON} AS endpoints`,
    )
    .bind(end.status, end.progress, end.outputs ? JSON.stringify(end.outputs) : null, end.error, end.error_code, end.started_at, end.finished_at, taskId)
    .first<{ endpoints: string }>();
  return row ? ownerEndpoints(row.endpoints) : undefined;
}

/** Internal lookups (callbacks, the reconciler, a task object created before it kept its job) that are not on behalf of a user. */
export async function findTaskById(db: D1Database, taskId: string): Promise<TaskRow | null> {
  return db.prepare("SELECT * FROM tasks WHERE id = ?").bind(taskId).first<TaskRow>();
}

/** Removes the file rows of a task's outputs; the task's own row stays. */
export async function deleteTaskOutputRows(db: D1Database, userId: string, taskId: string): Promise<void> {
  await deleteTaskFilesStatement(db, userId, taskId).run();
}

/** Removes a task's row and its output file rows. */
export async function deleteTaskRecords(db: D1Database, userId: string, taskId: string): Promise<void> {
  await db.batch([
    deleteTaskFilesStatement(db, userId, taskId),
    db.prepare("DELETE FROM tasks WHERE id = ? AND user_id = ?").bind(taskId, userId),
  ]);
}

/** Every task of a user with its status: erasing an account cancels the unfinished ones and destroys each task's object. */
export async function listUserTaskStatuses(db: D1Database, userId: string): Promise<Pick<TaskRow, "id" | "status">[]> {
  const { results } = await db.prepare("SELECT id, status FROM tasks WHERE user_id = ?").bind(userId).all<Pick<TaskRow, "id" | "status">>();
  return results;
}

/** Deletes every task row of a user; a statement, so erasing an account runs it in one batch (one transaction) with the other tables. */
export function deleteUserTasksStatement(db: D1Database, userId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM tasks WHERE user_id = ?").bind(userId);
}

/** An SQL condition for statements on `users` (aliased `users`): the user has at least one task. */
export const USER_HAS_TASKS = "EXISTS (SELECT 1 FROM tasks t WHERE t.user_id = users.id)";

/** How many tasks the user created since `since` (`value`); a statement, for batches. */
export function tasksCreatedSinceStatement(db: D1Database, userId: string, since: string): D1PreparedStatement {
  return db.prepare("SELECT COUNT(*) AS value FROM tasks WHERE user_id = ? AND created_at >= ?").bind(userId, since);
}

/** Seconds ffmpeg ran (started → finished) for the user's tasks that finished since `since` (`value`); a statement, for batches. */
export function processedSecondsStatement(db: D1Database, userId: string, since: string): D1PreparedStatement {
  return db.prepare(`SELECT (${PROCESSED_SECONDS}) AS value`).bind(userId, since);
}

/** Seconds the user's unfinished tasks hold of the daily quota, each its time limit (`value`); a statement, for batches. */
export function reservedSecondsStatement(db: D1Database, userId: string, taskTimeoutSeconds: number): D1PreparedStatement {
  return db.prepare(`SELECT (${RESERVED_SECONDS}) AS value`).bind(userId, null, taskTimeoutSeconds);
}

/** Seconds processed since `since` and seconds the unfinished tasks reserve: what the daily quota counts, in one round trip. */
export async function quotaSeconds(db: D1Database, userId: string, since: string, taskTimeoutSeconds: number): Promise<{ processed: number; reserved: number }> {
  const [processed, reserved] = await db.batch<{ value: number }>([processedSecondsStatement(db, userId, since), reservedSecondsStatement(db, userId, taskTimeoutSeconds)]);
  return { processed: Number(processed?.results[0]?.value ?? 0), reserved: Number(reserved?.results[0]?.value ?? 0) };
}

/** Per UTC day (`YYYY-MM-DD`) since `since`: tasks the user created, and seconds ffmpeg ran for the tasks that finished that day. Days without any are absent. */
export async function dailyTaskTotals(db: D1Database, userId: string, since: string): Promise<{ created: DayTotal[]; processedSeconds: DayTotal[] }> {
  const [created, processed] = await db.batch<DayTotal>([
    db.prepare("SELECT substr(created_at, 1, 10) AS day, COUNT(*) AS value FROM tasks WHERE user_id = ? AND created_at >= ? GROUP BY day").bind(userId, since),
    db
      .prepare("SELECT substr(finished_at, 1, 10) AS day, SUM((julianday(finished_at) - julianday(started_at)) * 86400.0) AS value FROM tasks WHERE user_id = ? AND finished_at >= ? AND started_at IS NOT NULL GROUP BY day")
      .bind(userId, since),
  ]);
  return { created: created!.results, processedSeconds: processed!.results };
}

interface DayTotal {
  day: string;
  value: number;
}

/** An SQL condition for statements on other tables, binding (task id, user id): that task of that user exists and has not ended. */
export const UNFINISHED_TASK_OF_USER = "EXISTS (SELECT 1 FROM tasks WHERE id = ? AND user_id = ? AND status NOT IN ('completed', 'failed'))";

/** A completed task's outputs with where each was delivered since (edge/tasks/deliveries.ts); its end itself never changes. */
export async function updateFinishedOutputs(db: D1Database, taskId: string, outputs: readonly StoredOutput[]): Promise<void> {
  await db.prepare("UPDATE tasks SET outputs = ? WHERE id = ? AND status = 'completed'").bind(JSON.stringify(outputs), taskId).run();
}
