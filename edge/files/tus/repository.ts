/** A row of `tus_uploads` (migrations/0004_tus_uploads.sql). */
export interface TusUploadRow {
  id: string;
  user_id: string;
  state: "uploading" | "completed" | "terminated";
  upload_length: number;
  upload_offset: number;
  metadata: string | null;
  declared_type: string | null;
  original_name: string | null;
  part_size: number;
  parts: string;
  tail_size: number;
  md5_state: string | null;
  content_type: string | null;
  download_only: number;
  file_key: string | null;
  multipart_id: string | null;
  lock_token: string | null;
  lock_expires_at: number | null;
  created_at: string;
  updated_at: string;
  expires_at: string;
}

/** What a PATCH has durably stored so far; written together so offset, parts, tail and MD5 always agree. */
export type Progress = Pick<TusUploadRow, "upload_offset" | "parts" | "tail_size" | "md5_state" | "content_type" | "download_only" | "file_key" | "multipart_id">;

export type NewUpload = Pick<TusUploadRow, "id" | "user_id" | "upload_length" | "metadata" | "declared_type" | "original_name" | "part_size" | "created_at" | "expires_at">;

export async function insertUpload(db: D1Database, row: NewUpload): Promise<void> {
  await db
    .prepare(
      `INSERT INTO tus_uploads (id, user_id, state, upload_length, metadata, declared_type, original_name, part_size, created_at, updated_at, expires_at)
       VALUES (?, ?, 'uploading', ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(row.id, row.user_id, row.upload_length, row.metadata, row.declared_type, row.original_name, row.part_size, row.created_at, row.created_at, row.expires_at)
    .run();
}

/** The user's upload, or null: another user's upload is indistinguishable from a missing one. */
export async function findUpload(db: D1Database, userId: string, id: string): Promise<TusUploadRow | null> {
  return db.prepare("SELECT * FROM tus_uploads WHERE id = ? AND user_id = ?").bind(id, userId).first<TusUploadRow>();
}

/**
 * Takes the upload for one PATCH when it is live, unlocked (or its lock lapsed) and at
 * `offset`: one conditional UPDATE, so of two concurrent PATCHes only one gets it.
 */
export async function acquireLock(db: D1Database, userId: string, id: string, offset: number, token: string, leaseMs: number): Promise<TusUploadRow | null> {
  const now = Date.now();
  return db
    .prepare(
      `UPDATE tus_uploads SET lock_token = ?, lock_expires_at = ?
       WHERE id = ? AND user_id = ? AND state = 'uploading' AND upload_offset = ? AND expires_at > ?
         AND (lock_token IS NULL OR lock_expires_at <= ?)
       RETURNING *`,
    )
    .bind(token, now + leaseMs, id, userId, offset, new Date(now).toISOString(), now)
    .first<TusUploadRow>();
}

/** Extends the lock; false when it was lost (lapsed and taken, the upload terminated or expired). */
export async function renewLock(db: D1Database, id: string, token: string, leaseMs: number): Promise<boolean> {
  const now = Date.now();
  const result = await db
    .prepare("UPDATE tus_uploads SET lock_expires_at = ? WHERE id = ? AND lock_token = ? AND state = 'uploading' AND expires_at > ?")
    .bind(now + leaseMs, id, token, new Date(now).toISOString())
    .run();
  return result.meta.changes === 1;
}

/** Records progress under the lock; false when the lock was lost. */
export async function commitProgress(db: D1Database, id: string, token: string, progress: Progress, leaseMs: number): Promise<boolean> {
  const result = await db
    .prepare(
      `UPDATE tus_uploads SET upload_offset = ?, parts = ?, tail_size = ?, md5_state = ?, content_type = ?, download_only = ?, file_key = ?,
         multipart_id = ?, updated_at = ?, lock_expires_at = ?
       WHERE id = ? AND lock_token = ? AND state = 'uploading'`,
    )
    .bind(
      progress.upload_offset, progress.parts, progress.tail_size, progress.md5_state, progress.content_type, progress.download_only,
      progress.file_key, progress.multipart_id, new Date().toISOString(), Date.now() + leaseMs, id, token,
    )
    .run();
  return result.meta.changes === 1;
}

export async function releaseLock(db: D1Database, id: string, token: string): Promise<void> {
  await db.prepare("UPDATE tus_uploads SET lock_token = NULL, lock_expires_at = NULL WHERE id = ? AND lock_token = ?").bind(id, token).run();
}

/** The statement that ends an upload as completed, for a batch with the file's own row. */
export function completeStatement(db: D1Database, id: string, token: string, progress: Progress): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE tus_uploads SET state = 'completed', upload_offset = ?, parts = ?, tail_size = 0, md5_state = NULL, content_type = ?,
         download_only = ?, file_key = ?, multipart_id = ?, updated_at = ?, lock_token = NULL, lock_expires_at = NULL
       WHERE id = ? AND lock_token = ? AND state = 'uploading'`,
    )
    .bind(progress.upload_offset, progress.parts, progress.content_type, progress.download_only, progress.file_key, progress.multipart_id, new Date().toISOString(), id, token);
}

/** Marks the upload terminated whatever holds it; a running PATCH notices at its next commit. */
export async function markTerminated(db: D1Database, id: string): Promise<void> {
  await db
    .prepare("UPDATE tus_uploads SET state = 'terminated', lock_token = NULL, lock_expires_at = NULL, updated_at = ? WHERE id = ?")
    .bind(new Date().toISOString(), id)
    .run();
}

/**
 * Uploads the sweep removes: unfinished ones idle for `idleMs` or past their expiry, and
 * terminated or completed ones past their expiry (kept until then so requests get 410).
 * One that a PATCH still holds is left for the next run, so no tail is written after the sweep.
 */
export async function listSweepable(db: D1Database, now: Date, idleMs: number, limit: number): Promise<TusUploadRow[]> {
  const { results } = await db
    .prepare(
      `SELECT * FROM tus_uploads
       WHERE (expires_at <= ?1 OR (state = 'uploading' AND updated_at <= ?2)) AND (lock_token IS NULL OR lock_expires_at <= ?3)
       ORDER BY expires_at LIMIT ?4`,
    )
    .bind(now.toISOString(), new Date(now.getTime() - idleMs).toISOString(), now.getTime(), limit)
    .all<TusUploadRow>();
  return results;
}

export async function deleteUploads(db: D1Database, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.prepare(`DELETE FROM tus_uploads WHERE id IN (${ids.map(() => "?").join(",")})`).bind(...ids).run();
}

/** What each of the user's uploads may hold in R2, for erasing the account. */
export async function listUserUploads(db: D1Database, userId: string): Promise<Pick<TusUploadRow, "id" | "file_key" | "multipart_id">[]> {
  const { results } = await db.prepare("SELECT id, file_key, multipart_id FROM tus_uploads WHERE user_id = ?").bind(userId).all<Pick<TusUploadRow, "id" | "file_key" | "multipart_id">>();
  return results;
}

export function deleteUserUploadsStatement(db: D1Database, userId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM tus_uploads WHERE user_id = ?").bind(userId);
}
