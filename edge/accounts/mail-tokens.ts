import { base64url } from "../../shared/encoding";
import { AppError } from "../../shared/errors";
import { hashToken } from "../../shared/token-hash";
import { userIdWhere } from "./users";

/** The `mail_tokens` table's owner: single-use tokens for mailed links; only their SHA-256 is stored. */

export type MailTokenPurpose = "verify" | "reset";

const LIFETIME_MS: Record<MailTokenPurpose, number> = { verify: 24 * 60 * 60 * 1000, reset: 60 * 60 * 1000 };

/** An SQL condition on `users` (aliased `users`), for statements on that table: the user has a mailed link, live or not. */
export const USER_HAS_MAIL_TOKENS = "EXISTS (SELECT 1 FROM mail_tokens t WHERE t.user_id = users.id)";

const isPlausible = (token: string) => token.length > 0 && token.length <= 128;

export async function issueMailToken(db: D1Database, userId: string, purpose: MailTokenPurpose, now = new Date()): Promise<string> {
  const token = base64url(crypto.getRandomValues(new Uint8Array(32)));
  await db
    .prepare("INSERT INTO mail_tokens (hash, user_id, purpose, created_at, expires_at) VALUES (?, ?, ?, ?, ?)")
    .bind(await hashToken(token), userId, purpose, now.toISOString(), new Date(now.getTime() + LIFETIME_MS[purpose]).toISOString())
    .run();
  return token;
}

/**
 * A token for a link to the user whose `column` (`id` or `email`) is `subject`, written only if
 * there is one: a single statement either way, so that an address with a user and one without
 * cost the answer the same round trips.
 */
async function tokenForUser(db: D1Database, column: "id" | "email", subject: string, purpose: MailTokenPurpose, now: Date): Promise<{ token: string; statement: D1PreparedStatement }> {
  const token = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const statement = db
    .prepare(`INSERT INTO mail_tokens (hash, user_id, purpose, created_at, expires_at) SELECT ?, id, ?, ?, ? FROM ${userIdWhere(column)} RETURNING user_id`)
    .bind(await hashToken(token), purpose, now.toISOString(), new Date(now.getTime() + LIFETIME_MS[purpose]).toISOString(), subject);
  return { token, statement };
}

/** A sign-up's verification token, to ride in the batch that may create user `userId` (createUser's `alongside`): written only if it did. */
export function verifyTokenForNewUser(db: D1Database, userId: string, now = new Date()): Promise<{ token: string; statement: D1PreparedStatement }> {
  return tokenForUser(db, "id", userId, "verify", now);
}

/** A reset token for the user with this address, or null (nothing written) when no user has it. */
export async function issueResetToken(db: D1Database, email: string, now = new Date()): Promise<{ token: string; userId: string } | null> {
  const { token, statement } = await tokenForUser(db, "email", email, "reset", now);
  const row = await statement.first<{ user_id: string }>();
  return row ? { token, userId: row.user_id } : null;
}

/** Uses up a token: deleted whether or not it is still valid, so it never works twice. */
export async function consumeMailToken(db: D1Database, token: string, purpose: MailTokenPurpose, now = new Date()): Promise<{ userId: string } | null> {
  if (!isPlausible(token)) return null;
  const row = await db
    .prepare("DELETE FROM mail_tokens WHERE hash = ? AND purpose = ? RETURNING user_id, expires_at")
    .bind(await hashToken(token), purpose)
    .first<{ user_id: string; expires_at: string }>();
  if (!row || row.expires_at <= now.toISOString()) return null;
  return { userId: row.user_id };
}

/**
 * The user a live verification token is for. The token is kept until the link expires, even once
 * followed: reopening the link can then be told the address is verified rather than that the
 * link is bad (the pending password it set is gone from the user by then).
 */
export async function readVerifyToken(db: D1Database, token: string, now = new Date()): Promise<{ userId: string } | null> {
  if (!isPlausible(token)) return null;
  const row = await db
    .prepare("SELECT user_id FROM mail_tokens WHERE hash = ? AND purpose = 'verify' AND expires_at > ?")
    .bind(await hashToken(token), now.toISOString())
    .first<{ user_id: string }>();
  return row ? { userId: row.user_id } : null;
}

/** The other verification tokens of a user whose address `usedToken` just verified. */
export async function dropOtherVerifyTokens(db: D1Database, userId: string, usedToken: string): Promise<D1PreparedStatement> {
  return db.prepare("DELETE FROM mail_tokens WHERE user_id = ? AND purpose = 'verify' AND hash != ?").bind(userId, await hashToken(usedToken));
}

/** Whether a link's token would still be accepted, without using it up (a page says so before the form is filled in). */
export async function isMailTokenLive(db: D1Database, token: string, purpose: MailTokenPurpose, now = new Date()): Promise<boolean> {
  if (!isPlausible(token)) return false;
  const row = await db
    .prepare("SELECT 1 AS live FROM mail_tokens WHERE hash = ? AND purpose = ? AND expires_at > ?")
    .bind(await hashToken(token), purpose, now.toISOString())
    .first<{ live: number }>();
  return row !== null;
}

/** Whether the user has a verification link that still works: a sign-up's pending password counts only while it does. */
export async function hasLiveVerifyToken(db: D1Database, userId: string, now = new Date()): Promise<boolean> {
  const row = await db.prepare("SELECT 1 AS live FROM mail_tokens WHERE user_id = ? AND purpose = 'verify' AND expires_at > ? LIMIT 1").bind(userId, now.toISOString()).first();
  return row !== null;
}

/** A token whose mail was never sent: nobody holds its link, so it goes. */
export async function revokeMailToken(db: D1Database, token: string): Promise<void> {
  await db.prepare("DELETE FROM mail_tokens WHERE hash = ?").bind(await hashToken(token)).run();
}

/** Every link of the user, or only those for `purpose`; a statement, for batches. */
export function dropMailTokensOf(db: D1Database, userId: string, purpose?: MailTokenPurpose): D1PreparedStatement {
  return purpose
    ? db.prepare("DELETE FROM mail_tokens WHERE user_id = ? AND purpose = ?").bind(userId, purpose)
    : db.prepare("DELETE FROM mail_tokens WHERE user_id = ?").bind(userId);
}

/** Every expired token (the cron sweep); a statement, for batches. */
export function sweepExpiredMailTokens(db: D1Database, now: Date): D1PreparedStatement {
  return db.prepare("DELETE FROM mail_tokens WHERE expires_at <= ?").bind(now.toISOString());
}

/** The one answer for a link that is unknown, used up or expired: which of them is not said. */
export const invalidLink = () => new AppError("INVALID_TOKEN", "This link is invalid, was already used or has expired; ask for a new one.");
