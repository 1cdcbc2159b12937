import { randomHex } from "../../shared/encoding";
import type { UploadRecord } from "../../shared/schemas/files";
import { config } from "../lib/config";
import { UNFINISHED_TASK_OF_USER } from "../tasks/repository";

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
 * before it). False when the task has ended, or is not this user's: nothing was written.
 */
export async function insertOutputFile(db: D1Database, row: FileRow & { task_id: string }): Promise<boolean> {
  const result = await db
    .prepare(
      `INSERT INTO files (key, user_id, kind, task_id, size, md5, content_type, original_name, created_at, expires_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE ${UNFINISHED_TASK_OF_USER}
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
