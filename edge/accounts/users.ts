import { randomHex } from "../../shared/encoding";

/** The `users` table's owner: every statement that names it is here; other tables' statements use its sub-queries below. */

export interface UserRow {
  id: string;
  name: string;
  email: string | null;
  password_hash: string | null;
  /** The password chosen at sign-up, until the verification link is followed (migrations/0012). */
  pending_password_hash: string | null;
  email_verified_at: string | null;
  created_at: string;
}

/** Addresses are stored lowercased (the request schemas lowercase them). */
export function findUserByEmail(db: D1Database, email: string): Promise<UserRow | null> {
  return db.prepare("SELECT * FROM users WHERE email = ?").bind(email).first<UserRow>();
}

export function findUser(db: D1Database, userId: string): Promise<UserRow | null> {
  return db.prepare("SELECT * FROM users WHERE id = ?").bind(userId).first<UserRow>();
}

/** What GET /v1/me shows of the account; a statement, for batches. */
export function accountStatement(db: D1Database, userId: string): D1PreparedStatement {
  return db.prepare("SELECT id, name, email, created_at FROM users WHERE id = ?").bind(userId);
}

export function newUserId(): string {
  return `usr_${randomHex(8)}`;
}

/** A sub-query for other tables' statements: the email of the user `userIdColumn` names. */
export function userEmailOf(userIdColumn: string): string {
  return `(SELECT email FROM users WHERE users.id = ${userIdColumn})`;
}

/** A sub-query to select from in other tables' inserts: the id (`id`) of the user whose `column` is the bound value. */
export function userIdWhere(column: "id" | "email"): string {
  return `(SELECT id FROM users WHERE ${column} = ?)`;
}

/**
 * A new, unverified user for a sign-up, holding the password chosen until the address is
 * verified; `created` is false when the address already had a user (or won a race with another
 * sign-up), and then nothing is written. Its name (what the key CLI shows) is the address, or
 * the id when an operator already uses that address as another user's name. `alongside` runs
 * in the same batch, after the insert: one round trip whether or not the user was new.
 */
export async function createUser(
  db: D1Database,
  email: string,
  now = new Date(),
  options: { id?: string; pendingPasswordHash?: string; alongside?: D1PreparedStatement[] } = {},
): Promise<{ user: UserRow; created: boolean }> {
  const id = options.id ?? newUserId();
  const alongside = options.alongside ?? [];
  const results = await db.batch([
    db
      .prepare(
        `INSERT INTO users (id, name, email, pending_password_hash, created_at)
         SELECT ?1, CASE WHEN EXISTS (SELECT 1 FROM users WHERE name = ?2) THEN ?1 ELSE ?2 END, ?2, ?4, ?3 WHERE true
         ON CONFLICT DO NOTHING`,
      )
      .bind(id, email, now.toISOString(), options.pendingPasswordHash ?? null),
    ...alongside,
    db.prepare("SELECT * FROM users WHERE email = ?").bind(email),
  ]);
  const user = (results.at(-1)!.results as UserRow[])[0]!;
  return { user, created: results[0]!.meta.changes > 0 };
}

/** Replaces the password; a sign-up's pending one goes too, so that its link can no longer set it. */
export function setPassword(db: D1Database, userId: string, passwordHash: string): D1PreparedStatement {
  return db.prepare("UPDATE users SET password_hash = ?, pending_password_hash = NULL WHERE id = ?").bind(passwordHash, userId);
}

/** The address is proven (a mailed link was followed); the first proof's time stays. */
export function markEmailVerified(db: D1Database, userId: string, now = new Date()): D1PreparedStatement {
  return db.prepare("UPDATE users SET email_verified_at = COALESCE(email_verified_at, ?) WHERE id = ?").bind(now.toISOString(), userId);
}

/**
 * A sign-up's verification link followed: the pending password becomes the password and the
 * address is verified, in one statement, so that of two requests with the link only one claims
 * it. Only on a user that has no password and was never verified; no change otherwise.
 */
export function claimPendingPassword(db: D1Database, userId: string, now = new Date()): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE users SET password_hash = pending_password_hash, pending_password_hash = NULL, email_verified_at = ?
       WHERE id = ? AND password_hash IS NULL AND email_verified_at IS NULL AND pending_password_hash IS NOT NULL`,
    )
    .bind(now.toISOString(), userId);
}

/**
 * Undoes a sign-up whose verification mail was not sent, so that asking again gets a new link
 * rather than the already-registered notice: the user goes, unless it got a password, a key or
 * a mailed link meanwhile (`holdings`: SQL conditions on `users`, from the owners of those
 * tables). The caller drops the sign-up's verification tokens first, in the same batch.
 */
export function forgetUnsentSignUpStatement(db: D1Database, userId: string, holdings: readonly string[]): D1PreparedStatement {
  return db
    .prepare(`DELETE FROM users WHERE id = ? AND password_hash IS NULL AND email_verified_at IS NULL${holdings.map((held) => ` AND NOT ${held}`).join("")}`)
    .bind(userId);
}

/**
 * Forgets sign-ups nobody confirmed, made before `createdBefore`: users with an address but
 * without a password or a verified address, and without anything `holdings` (SQL conditions on
 * `users`, from the owners of the tables that point at users) finds.
 */
export function deleteUnconfirmedUsersStatement(db: D1Database, createdBefore: string, holdings: readonly string[]): D1PreparedStatement {
  return db
    .prepare(
      `DELETE FROM users WHERE email_verified_at IS NULL AND password_hash IS NULL AND email IS NOT NULL AND created_at <= ?${holdings.map((held) => ` AND NOT ${held}`).join("")}`,
    )
    .bind(createdBefore);
}

/** Whether the user still exists (an erased account's OAuth grants stop at once). */
export async function userExists(db: D1Database, userId: string): Promise<boolean> {
  return (await db.prepare("SELECT 1 AS found FROM users WHERE id = ?").bind(userId).first()) !== null;
}

export function deleteUserStatement(db: D1Database, userId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM users WHERE id = ?").bind(userId);
}
