import { deleteUserDestinationsStatement } from "../destinations/repository";
import { purgeCached } from "../files/cdn-cache";
import { deleteUserFilesStatement } from "../files/records";
import { discardStoredBytes } from "../files/tus/objects";
import { deleteUserUploadsStatement, listUserUploads } from "../files/tus/repository";
import { deleteUserIdempotencyKeysStatement } from "../lib/idempotency";
import { deleteUserDeliveriesStatement } from "../webhooks/delivery";
import { deleteUserSecretsStatement } from "../webhooks/signing";
import { deleteUserApiKeysStatement } from "./api-keys";
import { dropMailTokensOf } from "./mail-tokens";
import { revokeAllSessions } from "./sessions";
import { clearSigninFailures } from "./signin-limits";
import { deleteUserStatement } from "./users";

/**
 * The account's tasks as erasing reaches them: their owner (edge/tasks/) is the core, which
 * accounts never import, so the caller hands them over.
 */
export interface ErasableTasks {
  /** Cancels the unfinished tasks (each stops its own transcoder). */
  cancelUnfinished(): Promise<void>;
  /** Deletes the task rows; run in the batch (one transaction) that deletes the user. */
  deleteRows(): D1PreparedStatement;
  /** Once the rows are gone: a transcoder finishing a canceled task then finds no task to report to. */
  destroyObjects(): Promise<void>;
}

/**
 * Deletes an account and everything it owns: its keys and sessions first (nothing can act for
 * it any more), then its unfinished tasks are canceled, then every R2 object under its prefixes
 * (uploads, outputs, logs) with their edge-cache entries, unfinished tus uploads, every task's
 * Durable Object, and every D1 row that names the user, each through its table's owner.
 * test/edge/console-api/account.test.ts checks every table with a user_id.
 */
export async function eraseAccount(env: Env, user: { id: string; email: string | null }, tasks: ErasableTasks): Promise<void> {
  const db = env.DB;
  await db.batch([revokeAllSessions(db, user.id), deleteUserApiKeysStatement(db, user.id), dropMailTokensOf(db, user.id)]);

  await tasks.cancelUnfinished();

  for (const upload of await listUserUploads(db, user.id)) await discardStoredBytes(env.FILES, upload);
  for (const prefix of [`uploads/${user.id}/`, `outputs/${user.id}/`, `logs/${user.id}/`]) await deletePrefix(env, prefix);

  await db.batch([
    deleteUserDeliveriesStatement(db, user.id),
    deleteUserSecretsStatement(db, user.id),
    deleteUserDestinationsStatement(db, user.id),
    deleteUserIdempotencyKeysStatement(db, user.id),
    deleteUserUploadsStatement(db, user.id),
    deleteUserFilesStatement(db, user.id),
    tasks.deleteRows(),
    ...(user.email === null ? [] : [clearSigninFailures(db, user.email)]),
    // Again, in the same transaction as the user: a reset mail or a sign-in that raced the
    // deletion would otherwise hold the user row through its foreign key.
    dropMailTokensOf(db, user.id),
    revokeAllSessions(db, user.id),
    deleteUserStatement(db, user.id),
  ]);
  await tasks.destroyObjects();
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
