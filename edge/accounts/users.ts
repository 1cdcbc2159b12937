import { randomHex } from "../../shared/api-keys";

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

/**
 * A new, unverified user for a sign-up; `created` is false when the address already had a user
 * (or won a race with another sign-up). Its name (what the key CLI shows) is the address, or
 * the id when an operator already uses that address as another user's name.
 */
export async function createUser(db: D1Database, email: string, now = new Date()): Promise<{ user: UserRow; created: boolean }> {
  const id = `usr_${randomHex(8)}`;
  const inserted = await db
    .prepare(
      `INSERT INTO users (id, name, email, created_at)
       SELECT ?1, CASE WHEN EXISTS (SELECT 1 FROM users WHERE name = ?2) THEN ?1 ELSE ?2 END, ?2, ?3 WHERE true
       ON CONFLICT DO NOTHING`,
    )
    .bind(id, email, now.toISOString())
    .run();
  return { user: (await findUserByEmail(db, email))!, created: inserted.meta.changes > 0 };
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
