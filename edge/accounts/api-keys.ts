import type { z } from "zod";
import { generateApiKey } from "../../shared/api-keys";
import type { ApiKeyListSchema } from "../../shared/schemas/accounts";
import { hashToken } from "../../shared/token-hash";

/** The `api_keys` table's owner: only the SHA-256 of a key is stored, and its prefix names it. */

export type ListedApiKey = z.infer<typeof ApiKeyListSchema>["keys"][number];

/** An SQL condition on `users` (aliased `users`), for statements on that table: the user has a key, revoked or not. */
export const USER_HAS_API_KEYS = "EXISTS (SELECT 1 FROM api_keys k WHERE k.user_id = users.id)";

/** The user's keys, newest first, revoked ones included. */
export async function listApiKeys(db: D1Database, userId: string): Promise<ListedApiKey[]> {
  const { results } = await db
    .prepare("SELECT prefix AS id, name, prefix, created_at, last_used_at, revoked_at FROM api_keys WHERE user_id = ? ORDER BY created_at DESC, prefix")
    .bind(userId)
    .all<ListedApiKey>();
  return results;
}

/** A new key for the user: the key itself is returned once and never stored. */
export async function createApiKey(db: D1Database, userId: string, name: string, now = new Date()): Promise<{ key: string; prefix: string; createdAt: string }> {
  const { key, prefix } = generateApiKey();
  const createdAt = now.toISOString();
  await db.prepare("INSERT INTO api_keys (hash, prefix, user_id, created_at, name) VALUES (?, ?, ?, ?, ?)").bind(await hashToken(key), prefix, userId, createdAt, name).run();
  return { key, prefix, createdAt };
}

/** Revokes the user's key named by `prefix`; false when the user has no such key (revoking twice is true and changes nothing). */
export async function revokeApiKey(db: D1Database, userId: string, prefix: string, now = new Date()): Promise<boolean> {
  const row = await db.prepare("SELECT revoked_at FROM api_keys WHERE prefix = ? AND user_id = ?").bind(prefix, userId).first<{ revoked_at: string | null }>();
  if (!row) return false;
  await db.prepare("UPDATE api_keys SET revoked_at = ? WHERE prefix = ? AND user_id = ? AND revoked_at IS NULL").bind(now.toISOString(), prefix, userId).run();
  return true;
}

/** The unrevoked key with this hash, if any. */
export function findActiveApiKey(db: D1Database, hash: string): Promise<{ hash: string; user_id: string; last_used_at: string | null } | null> {
  return db.prepare("SELECT hash, user_id, last_used_at FROM api_keys WHERE hash = ? AND revoked_at IS NULL").bind(hash).first<{ hash: string; user_id: string; last_used_at: string | null }>();
}

export async function recordApiKeyUse(db: D1Database, hash: string, now = new Date()): Promise<void> {
  await db.prepare("UPDATE api_keys SET last_used_at = ? WHERE hash = ?").bind(now.toISOString(), hash).run();
}

/** Which of these key hashes are unrevoked keys (`credential`); a statement, for batches. */
export function liveApiKeysStatement(db: D1Database, hashes: readonly string[]): D1PreparedStatement {
  return db.prepare(`SELECT hash AS credential FROM api_keys WHERE revoked_at IS NULL AND hash IN (${hashes.map(() => "?").join(",")})`).bind(...hashes);
}

export function deleteUserApiKeysStatement(db: D1Database, userId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM api_keys WHERE user_id = ?").bind(userId);
}
