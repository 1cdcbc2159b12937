import { purgeCached } from "./cdn-cache";
import { deleteExpiredRows, listExpiredKeys } from "./records";
import { discardStoredBytes } from "./tus/objects";
import { deleteUploads, listSweepable } from "./tus/repository";

/** R2 deletes up to 1000 keys per call; D1 binds at most 100 parameters per statement. */
const BATCH = 90;
const MAX_BATCHES_PER_RUN = 50;

/**
 * The cron sweep: deletes expired objects and their edge-cache entries, then their rows, in
 * bounded batches. Deleting twice is harmless, so two sweeps running at once only repeat work.
 * Returns how many went; `expired` is told the keys of each batch once they are gone (the
 * caller announces them: files know nothing of webhooks).
 */
export async function sweepExpiredFiles(env: Env, now = new Date(), expired?: (keys: string[]) => Promise<unknown>): Promise<number> {
  const cutoff = now.toISOString();
  let deleted = 0;
  for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
    const keys = await listExpiredKeys(env.DB, cutoff, BATCH);
    if (keys.length === 0) break;
    // Objects first: a row without an object is harmless, an object without a row would never be swept.
    await env.FILES.delete(keys);
    await purgeCached(env, keys);
    await deleteExpiredRows(env.DB, cutoff, keys);
    deleted += keys.length;
    await expired?.(keys);
    if (keys.length < BATCH) break;
  }
  return deleted;
}

/** An unfinished resumable upload that has seen no PATCH for this long is abandoned. */
const TUS_IDLE_MS = 24 * 3_600_000;

/**
 * The cron sweep of resumable uploads: aborts abandoned ones (idle for 24 h, or past their
 * expiry) and frees their parts and tails, and forgets terminated and completed ones once
 * expired (a completed upload's file is swept by `sweepExpiredFiles`). Returns how many went.
 */
export async function sweepAbandonedUploads(env: Env, now = new Date()): Promise<number> {
  let swept = 0;
  for (let batch = 0; batch < MAX_BATCHES_PER_RUN; batch++) {
    const uploads = await listSweepable(env.DB, now, TUS_IDLE_MS, BATCH);
    if (uploads.length === 0) break;
    for (const upload of uploads) if (upload.state !== "completed") await discardStoredBytes(env.FILES, upload);
    await deleteUploads(env.DB, uploads.map((upload) => upload.id));
    swept += uploads.length;
    if (uploads.length < BATCH) break;
  }
  return swept;
}
