import { dispatcherFor } from "../dispatch/dispatcher";
import { purgeCached } from "../files/cdn-cache";
import { discardStoredBytes } from "../files/tus/objects";
import { taskStub } from "../lib/stubs";
import { cancelTask } from "../tasks/live-state";
import { deleteUserTasksStatement, listUserTaskStatuses } from "../tasks/repository";
import { clearSigninFailures } from "./signin-limits";

/**
 * Deletes an account and everything it owns: its keys and sessions first (nothing can act for
 * it any more), then its unfinished tasks are canceled, then every R2 object under its prefixes
 * (uploads, outputs, logs) with their edge-cache entries, unfinished tus uploads, every task's
 * Durable Object, and every D1 row that names the user. test/edge/console-api/account.test.ts
 * checks every table with a user_id.
 */
export async function eraseAccount(env: Env, userId: string, email: string | null): Promise<void> {
  const db = env.DB;
  await db.batch([
    db.prepare("DELETE FROM sessions WHERE user_id = ?").bind(userId),
    db.prepare("DELETE FROM api_keys WHERE user_id = ?").bind(userId),
    db.prepare("DELETE FROM mail_tokens WHERE user_id = ?").bind(userId),
  ]);

  const tasks = await listUserTaskStatuses(db, userId);
  for (const task of tasks.filter((row) => row.status === "pending" || row.status === "running")) {
    const result = await cancelTask(env, task.id);
    // A transcoder that missed the cancel is told to stop by the answer to its next report.
    if (result.target) await dispatcherFor(env).cancel(task.id, result.target).catch(() => {});
  }

  const { results: tusUploads } = await db.prepare("SELECT id, file_key, multipart_id FROM tus_uploads WHERE user_id = ?").bind(userId).all<{ id: string; file_key: string | null; multipart_id: string | null }>();
  for (const upload of tusUploads) await discardStoredBytes(env.FILES, upload);
  for (const prefix of [`uploads/${userId}/`, `outputs/${userId}/`, `logs/${userId}/`]) await deletePrefix(env, prefix);

  await db.batch([
    db.prepare("DELETE FROM webhook_deliveries WHERE user_id = ?").bind(userId),
    db.prepare("DELETE FROM webhook_secrets WHERE user_id = ?").bind(userId),
    db.prepare("DELETE FROM idempotency_keys WHERE user_id = ?").bind(userId),
    db.prepare("DELETE FROM tus_uploads WHERE user_id = ?").bind(userId),
    db.prepare("DELETE FROM files WHERE user_id = ?").bind(userId),
    deleteUserTasksStatement(db, userId),
    ...(email === null ? [] : [clearSigninFailures(db, email)]),
    // Again, in the same transaction as the user: a reset mail or a sign-in that raced the
    // deletion would otherwise hold the user row through its foreign key.
    db.prepare("DELETE FROM mail_tokens WHERE user_id = ?").bind(userId),
    db.prepare("DELETE FROM sessions WHERE user_id = ?").bind(userId),
    db.prepare("DELETE FROM users WHERE id = ?").bind(userId),
  ]);
  // After the rows: a transcoder finishing a canceled task finds no task to report to.
  for (const task of tasks) await taskStub(env, task.id).destroy();
}

/** Deletes every object under `prefix`, and each one's edge-cache entry (a CDN-served copy must not outlive the account). */
async function deletePrefix(env: Env, prefix: string): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await env.FILES.list({ prefix, cursor, limit: 1000 });
    const keys = page.objects.map((object) => object.key);
    if (keys.length > 0) {
      await env.FILES.delete(keys);
      await purgeCached(env, keys);
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}
