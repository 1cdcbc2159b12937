import { base64url } from "../../shared/encoding";
import { hashToken } from "../../shared/token-hash";

export type MailTokenPurpose = "verify" | "reset";

const LIFETIME_MS: Record<MailTokenPurpose, number> = { verify: 24 * 60 * 60 * 1000, reset: 60 * 60 * 1000 };

/** A single-use token for a mailed link; only its SHA-256 is stored. */
export async function issueMailToken(db: D1Database, userId: string, purpose: MailTokenPurpose, passwordHash: string | null = null, now = new Date()): Promise<string> {
  const token = base64url(crypto.getRandomValues(new Uint8Array(32)));
  await db
    .prepare("INSERT INTO mail_tokens (hash, user_id, purpose, password_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(await hashToken(token), userId, purpose, passwordHash, now.toISOString(), new Date(now.getTime() + LIFETIME_MS[purpose]).toISOString())
    .run();
  return token;
}

/**
 * A token for a link to the user that `userWhere` (`id = ?` or `email = ?`, bound to `subject`)
 * finds, written only if there is one: a single statement either way, so that an address with
 * a user and one without cost the answer the same round trips.
 */
async function tokenForUser(db: D1Database, userWhere: "id" | "email", subject: string, purpose: MailTokenPurpose, passwordHash: string | null, now: Date): Promise<{ token: string; statement: D1PreparedStatement }> {
  const token = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const statement = db
    .prepare(`INSERT INTO mail_tokens (hash, user_id, purpose, password_hash, created_at, expires_at) SELECT ?, id, ?, ?, ?, ? FROM users WHERE ${userWhere} = ? RETURNING user_id`)
    .bind(await hashToken(token), purpose, passwordHash, now.toISOString(), new Date(now.getTime() + LIFETIME_MS[purpose]).toISOString(), subject);
  return { token, statement };
}

/** A sign-up's verification token, to ride in the batch that may create user `userId` (createUser's `alongside`): written only if it did. */
export function verifyTokenForNewUser(db: D1Database, userId: string, passwordHash: string, now = new Date()): Promise<{ token: string; statement: D1PreparedStatement }> {
  return tokenForUser(db, "id", userId, "verify", passwordHash, now);
}

/** A reset token for the user with this address, or null (nothing written) when no user has it. */
export async function issueResetToken(db: D1Database, email: string, now = new Date()): Promise<{ token: string; userId: string } | null> {
  const { token, statement } = await tokenForUser(db, "email", email, "reset", null, now);
  const row = await statement.first<{ user_id: string }>();
  return row ? { token, userId: row.user_id } : null;
}

/** Uses up a token: deleted whether or not it is still valid, so it never works twice. */
export async function consumeMailToken(db: D1Database, token: string, purpose: MailTokenPurpose, now = new Date()): Promise<{ userId: string; passwordHash: string | null } | null> {
  if (token.length === 0 || token.length > 128) return null;
  const row = await db
    .prepare("DELETE FROM mail_tokens WHERE hash = ? AND purpose = ? RETURNING user_id, password_hash, expires_at")
    .bind(await hashToken(token), purpose)
    .first<{ user_id: string; password_hash: string | null; expires_at: string }>();
  if (!row || row.expires_at <= now.toISOString()) return null;
  return { userId: row.user_id, passwordHash: row.password_hash };
}

/**
 * Uses up a verification token but keeps its row, without the password, until the link expires:
 * reopening the link can then be told the address is verified rather than that the link is bad.
 * `passwordHash` is null when the token was used before (by this request's rival, too).
 */
export async function useVerifyToken(db: D1Database, token: string, now = new Date()): Promise<{ userId: string; passwordHash: string | null } | null> {
  if (token.length === 0 || token.length > 128) return null;
  const hash = await hashToken(token);
  const row = await db
    .prepare("SELECT user_id, password_hash, expires_at FROM mail_tokens WHERE hash = ? AND purpose = 'verify'")
    .bind(hash)
    .first<{ user_id: string; password_hash: string | null; expires_at: string }>();
  if (!row || row.expires_at <= now.toISOString()) return null;
  if (!row.password_hash) return { userId: row.user_id, passwordHash: null };
  const taken = await db.prepare("UPDATE mail_tokens SET password_hash = NULL WHERE hash = ? AND password_hash IS NOT NULL").bind(hash).run();
  return { userId: row.user_id, passwordHash: taken.meta.changes ? row.password_hash : null };
}

/** The other verification tokens of a user whose address `usedToken` just verified. */
export async function dropOtherVerifyTokens(db: D1Database, userId: string, usedToken: string): Promise<D1PreparedStatement> {
  return db.prepare("DELETE FROM mail_tokens WHERE user_id = ? AND purpose = 'verify' AND hash != ?").bind(userId, await hashToken(usedToken));
}

/** Whether a link's token would still be accepted, without using it up (a page says so before the form is filled in). */
export async function isMailTokenLive(db: D1Database, token: string, purpose: MailTokenPurpose, now = new Date()): Promise<boolean> {
  if (token.length === 0 || token.length > 128) return false;
  const row = await db
    .prepare("SELECT 1 AS live FROM mail_tokens WHERE hash = ? AND purpose = ? AND expires_at > ?")
    .bind(await hashToken(token), purpose, now.toISOString())
    .first<{ live: number }>();
  return row !== null;
}

/** The password of the newest unexpired sign-up of a user who has not verified the address yet. */
export async function pendingPasswordHash(db: D1Database, userId: string, now = new Date()): Promise<string | null> {
  const row = await db
    .prepare("SELECT password_hash FROM mail_tokens WHERE user_id = ? AND purpose = 'verify' AND password_hash IS NOT NULL AND expires_at > ? ORDER BY created_at DESC LIMIT 1")
    .bind(userId, now.toISOString())
    .first<{ password_hash: string }>();
  return row?.password_hash ?? null;
}

/** A token whose mail was never sent: nobody holds its link, so it goes. */
export async function revokeMailToken(db: D1Database, token: string): Promise<void> {
  await db.prepare("DELETE FROM mail_tokens WHERE hash = ?").bind(await hashToken(token)).run();
}
