/**
 * The multipart uploads one request holds open (`open_multipart_uploads`): recorded when R2
 * creates one, forgotten when it is completed or aborted, so one cut off by a runtime death
 * is aborted by the cron sweep instead of keeping its parts. (R2's own lifecycle rule aborts
 * them only after 7 days: https://developers.cloudflare.com/r2/buckets/object-lifecycles/)
 */

/** Older than any request lives: a 1 GB body at 100 KB/s takes under 3 hours. */
const MAX_OPEN_MS = 6 * 3_600_000;
const BATCH = 50;
const MAX_BATCHES_PER_RUN = 20;

export async function recordOpenMultipart(db: D1Database, upload: Pick<R2MultipartUpload, "key" | "uploadId">): Promise<void> {
  await db.prepare("INSERT OR IGNORE INTO open_multipart_uploads (upload_id, object_key, created_at) VALUES (?, ?, ?)")
    .bind(upload.uploadId, upload.key, new Date().toISOString())
    .run();
}

export async function forgetOpenMultipart(db: D1Database, uploadId: string): Promise<void> {
  await db.prepare("DELETE FROM open_multipart_uploads WHERE upload_id = ?").bind(uploadId).run();
}

/** Aborts the recorded multipart uploads older than MAX_OPEN_MS; returns how many went. */
export async function sweepOpenMultipartUploads(env: Env, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - MAX_OPEN_MS).toISOString();
  let swept = 0;
  for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
    const { results } = await env.DB.prepare("SELECT upload_id, object_key FROM open_multipart_uploads WHERE created_at <= ? ORDER BY created_at LIMIT ?")
      .bind(cutoff, BATCH)
      .all<{ upload_id: string; object_key: string }>();
    for (const row of results) {
      // Aborting one that was completed, or already aborted, fails harmlessly.
      await env.FILES.resumeMultipartUpload(row.object_key, row.upload_id).abort().catch(() => {});
      await forgetOpenMultipart(env.DB, row.upload_id);
    }
    swept += results.length;
    if (results.length < BATCH) break;
  }
  return swept;
}
