import { base64url, hashApiKey } from "../../shared/api-keys";

export type MailTokenPurpose = "verify" | "reset";

const LIFETIME_MS: Record<MailTokenPurpose, number> = { verify: 24 * 60 * 60 * 1000, reset: 60 * 60 * 1000 };

/** A single-use token for a mailed link; only its SHA-256 is stored. */
export async function issueMailToken(db: D1Database, userId: string, purpose: MailTokenPurpose, passwordHash: string | null = null, now = new Date()): Promise<string> {
  const token = base64url(crypto.getRandomValues(new Uint8Array(32)));
  await db
    .prepare("INSERT INTO mail_tokens (hash, user_id, purpose, password_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)")
    .bind(await hashApiKey(token), userId, purpose, passwordHash, now.toISOString(), new Date(now.getTime() + LIFETIME_MS[purpose]).toISOString())
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
    .bind(await hashApiKey(token), purpose, passwordHash, now.toISOString(), new Date(now.getTime() + LIFETIME_MS[purpose]).toISOString(), subject);
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
    .bind(await hashApiKey(token), purpose)
    .first<{ user_id: string; password_hash: string | null; expires_at: string }>();
  if (!row || row.expires_at <= now.toISOString()) return null;
  return { userId: row.user_id, passwordHash: row.password_hash };
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
  await db.prepare("DELETE FROM mail_tokens WHERE hash = ?").bind(await hashApiKey(token)).run();
}
