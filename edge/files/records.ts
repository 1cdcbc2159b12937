import { randomHex } from "../../shared/encoding";
import type { UploadRecord } from "../../shared/schemas/files";
import { config } from "../lib/config";

export interface FileRow {
  key: string;
  user_id: string;
  kind: "upload" | "output";
  task_id: string | null;
  size: number;
  md5: string | null;
  content_type: string;
  original_name: string | null;
  created_at: string;
  expires_at: string;
}

/** `uploads/<user_id>/<128-bit random hex>.<ext>`: nothing in a key comes from user text but the vetted extension. */
export function newUploadKey(userId: string, extension: string): string {
  return `uploads/${userId}/${randomHex(16)}.${extension}`;
}

/** An SQL condition on `users` (aliased `users`), for statements on that table: the user has a file row, expired or not. */
export const USER_HAS_FILES = "EXISTS (SELECT 1 FROM files f WHERE f.user_id = users.id)";

export function expiryFrom(now: Date, env: Env): string {
  return new Date(now.getTime() + config(env).fileTtlSeconds * 1000).toISOString();
}

export function publicUrls(env: Env, key: string): { url: string; cn_url: string } {
  const { publicUrl, cnPublicUrl } = config(env);
  const path = key.split("/").map(encodeURIComponent).join("/");
  return { url: `${publicUrl}/${path}`, cn_url: `${cnPublicUrl}/${path}` };
}

export function toUploadRecord(env: Env, row: Pick<FileRow, "key" | "md5" | "size" | "content_type" | "expires_at">): UploadRecord {
  return { ...publicUrls(env, row.key), key: row.key, md5: row.md5 ?? "", size: row.size, content_type: row.content_type, expires_at: row.expires_at };
}

export async function insertFile(db: D1Database, row: FileRow): Promise<void> {
  await insertFileStatement(db, row).run();
}

/**
 * A task's output row, written only while the task has not ended (the same query: no read
 * before it). `whileUnfinished` is that condition, from the tasks' owner (tasks/repository.ts's
 * UNFINISHED_TASK_OF_USER, binding task id and user id): files never import the core. False
 * when the task has ended, or is not this user's: nothing was written.
 */
export async function insertOutputFile(db: D1Database, row: FileRow & { task_id: string }, whileUnfinished: string): Promise<boolean> {
  const result = await db
    .prepare(
      `INSERT INTO files (key, user_id, kind, task_id, size, md5, content_type, original_name, created_at, expires_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE ${whileUnfinished}
       ON CONFLICT(key) DO UPDATE SET size = excluded.size, md5 = excluded.md5, content_type = excluded.content_type,
         created_at = excluded.created_at, expires_at = excluded.expires_at`,
    )
    .bind(row.key, row.user_id, row.kind, row.task_id, row.size, row.md5, row.content_type, row.original_name, row.created_at, row.expires_at, row.task_id, row.user_id)
    .run();
  return result.meta.changes > 0;
}

/** The insert on its own, for a batch that must write it together with another row. */
export function insertFileStatement(db: D1Database, row: FileRow): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO files (key, user_id, kind, task_id, size, md5, content_type, original_name, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(key) DO UPDATE SET size = excluded.size, md5 = excluded.md5, content_type = excluded.content_type,
         created_at = excluded.created_at, expires_at = excluded.expires_at`,
    )
    .bind(row.key, row.user_id, row.kind, row.task_id, row.size, row.md5, row.content_type, row.original_name, row.created_at, row.expires_at);
}

/** A page of the user's unexpired files, newest first, and how many there are in all. */
export async function listFiles(db: D1Database, userId: string, page: { limit: number; offset: number }, now = new Date()): Promise<{ total: number; rows: FileRow[] }> {
  const cutoff = now.toISOString();
  const [count, list] = await db.batch([
    db.prepare("SELECT COUNT(*) AS total FROM files WHERE user_id = ? AND expires_at > ?").bind(userId, cutoff),
    db.prepare("SELECT * FROM files WHERE user_id = ? AND expires_at > ? ORDER BY created_at DESC, key DESC LIMIT ? OFFSET ?").bind(userId, cutoff, page.limit, page.offset),
  ]);
  return { total: (count!.results[0] as { total: number }).total, rows: list!.results as FileRow[] };
}

/** The user's file, or null: another user's file is indistinguishable from a missing one. */
export async function findFile(db: D1Database, userId: string, key: string): Promise<FileRow | null> {
  return db.prepare("SELECT * FROM files WHERE key = ? AND user_id = ?").bind(key, userId).first<FileRow>();
}

/** The names the user's files were uploaded under, by key, for those of `keys` that have one (expired rows not yet swept included). */
export async function originalNames(db: D1Database, userId: string, keys: readonly string[]): Promise<Map<string, string>> {
  if (keys.length === 0) return new Map();
  const { results } = await db
    .prepare(`SELECT key, original_name FROM files WHERE user_id = ? AND original_name IS NOT NULL AND key IN (${keys.map(() => "?").join(", ")})`)
    .bind(userId, ...keys)
    .all<{ key: string; original_name: string }>();
  return new Map(results.map((row) => [row.key, row.original_name]));
}

/** The user's unexpired uploads (not outputs), newest first, at most `limit`. */
export async function listUploads(db: D1Database, userId: string, limit: number, now = new Date()): Promise<Pick<FileRow, "key" | "md5" | "size" | "content_type" | "original_name" | "created_at" | "expires_at">[]> {
  const { results } = await db
    .prepare(
      `SELECT key, md5, size, content_type, original_name, created_at, expires_at FROM files
       WHERE user_id = ? AND kind = 'upload' AND expires_at > ? ORDER BY created_at DESC LIMIT ?`,
    )
    .bind(userId, now.toISOString(), limit)
    .all<Pick<FileRow, "key" | "md5" | "size" | "content_type" | "original_name" | "created_at" | "expires_at">>();
  return results;
}

/** Bytes the user's unexpired files take (`value`); a statement, for batches. */
export function storedBytesStatement(db: D1Database, userId: string, now = new Date()): D1PreparedStatement {
  return db.prepare("SELECT COALESCE(SUM(size), 0) AS value FROM files WHERE user_id = ? AND expires_at > ?").bind(userId, now.toISOString());
}

/** Bytes the user's unexpired files take. */
export async function storedBytes(db: D1Database, userId: string, now = new Date()): Promise<number> {
  return Number((await storedBytesStatement(db, userId, now).first<{ value: number }>())?.value ?? 0);
}

/** When the file with this key expires, from its row; undefined without one. */
export async function expiryOf(db: D1Database, key: string): Promise<string | undefined> {
  const row = await db.prepare("SELECT expires_at FROM files WHERE key = ?").bind(key).first<{ expires_at: string }>();
  return row?.expires_at;
}

/** Keys of files expired by `cutoff`, oldest first, at most `limit`. */
export async function listExpiredKeys(db: D1Database, cutoff: string, limit: number): Promise<string[]> {
  const { results } = await db.prepare("SELECT key FROM files WHERE expires_at <= ? ORDER BY expires_at LIMIT ?").bind(cutoff, limit).all<{ key: string }>();
  return results.map((row) => row.key);
}

/** The rows of those `keys` that are still expired by `cutoff` (a file renewed meanwhile stays). */
export async function deleteExpiredRows(db: D1Database, cutoff: string, keys: readonly string[]): Promise<void> {
  await db.prepare(`DELETE FROM files WHERE expires_at <= ? AND key IN (${keys.map(() => "?").join(",")})`).bind(cutoff, ...keys).run();
}

/** The row of `key`, whoever's it is (an upload that failed after its row was written). */
export async function deleteFileRow(db: D1Database, key: string): Promise<void> {
  await db.prepare("DELETE FROM files WHERE key = ?").bind(key).run();
}

/** The rows of a task's output files; a statement, for batches. */
export function deleteTaskFilesStatement(db: D1Database, userId: string, taskId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM files WHERE task_id = ? AND user_id = ?").bind(taskId, userId);
}

/** Every file row of the user; a statement, for batches (the objects are deleted by prefix). */
export function deleteUserFilesStatement(db: D1Database, userId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM files WHERE user_id = ?").bind(userId);
}

/**
 * Removes a file now rather than at its expiry: the object first, then the row (a row without
 * an object is harmless; an object without a row would never be swept). The caller purges the
 * edge cache (`purgeCached`).
 */
export async function deleteFile(env: Env, row: Pick<FileRow, "key" | "user_id">): Promise<void> {
  await env.FILES.delete(row.key);
  await env.DB.prepare("DELETE FROM files WHERE key = ? AND user_id = ?").bind(row.key, row.user_id).run();
}

/**
 * Original file names are kept only as display metadata: control, format (bidi overrides)
 * and path characters are dropped and the length is bounded.
 */
export function sanitizeFilename(name: string | undefined | null): string | null {
  if (!name) return null;
  const base = name.split(/[\\/]/).pop() ?? "";
  const cleaned = base.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, "").replace(/^\.+/, "").trim().slice(0, 200);
  return cleaned || null;
}
