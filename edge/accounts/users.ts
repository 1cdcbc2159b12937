import { randomHex } from "../../shared/encoding";

export interface UserRow {
  id: string;
  name: string;
  email: string | null;
  password_hash: string | null;
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

export function newUserId(): string {
  return `usr_${randomHex(8)}`;
}

/**
 * A new, unverified user for a sign-up; `created` is false when the address already had a user
 * (or won a race with another sign-up). Its name (what the key CLI shows) is the address, or
 * the id when an operator already uses that address as another user's name. `alongside` runs
 * in the same batch, after the insert: one round trip whether or not the user was new.
 */
export async function createUser(db: D1Database, email: string, now = new Date(), options: { id?: string; alongside?: D1PreparedStatement[] } = {}): Promise<{ user: UserRow; created: boolean }> {
  const id = options.id ?? newUserId();
  const alongside = options.alongside ?? [];
  const results = await db.batch([
    db
      .prepare(
        `INSERT INTO users (id, name, email, created_at)
         SELECT ?1, CASE WHEN EXISTS (SELECT 1 FROM users WHERE name = ?2) THEN ?1 ELSE ?2 END, ?2, ?3 WHERE true
         ON CONFLICT DO NOTHING`,
      )
      .bind(id, email, now.toISOString()),
    ...alongside,
    db.prepare("SELECT * FROM users WHERE email = ?").bind(email),
  ]);
  const user = (results.at(-1)!.results as UserRow[])[0]!;
  return { user, created: results[0]!.meta.changes > 0 };
}

export function setPassword(db: D1Database, userId: string, passwordHash: string, now = new Date()): D1PreparedStatement {
  return db.prepare("UPDATE users SET password_hash = ?, email_verified_at = COALESCE(email_verified_at, ?) WHERE id = ?").bind(passwordHash, now.toISOString(), userId);
}

/** A sign-up's password, set when its link is followed: only on a user that has none and was never verified. */
export function setFirstPassword(db: D1Database, userId: string, passwordHash: string, now = new Date()): D1PreparedStatement {
  return db
    .prepare("UPDATE users SET password_hash = ?, email_verified_at = ? WHERE id = ? AND password_hash IS NULL AND email_verified_at IS NULL")
    .bind(passwordHash, now.toISOString(), userId);
}

/**
 * Undoes a sign-up whose verification mail was not sent, so that asking again gets a new link
 * rather than the already-registered notice: the user goes with its tokens, unless it got a
 * password or a key meanwhile.
 */
export async function forgetUnsentSignUp(db: D1Database, userId: string): Promise<void> {
  await db.batch([
    db.prepare("DELETE FROM mail_tokens WHERE user_id = ? AND purpose = 'verify'").bind(userId),
    db
      .prepare("DELETE FROM users WHERE id = ? AND password_hash IS NULL AND email_verified_at IS NULL AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.user_id = users.id) AND NOT EXISTS (SELECT 1 FROM mail_tokens t WHERE t.user_id = users.id)")
      .bind(userId),
  ]);
}
