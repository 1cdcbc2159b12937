import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { base64url, randomHex } from "../../shared/encoding";
import { hashToken } from "../../shared/token-hash";
import type { Session } from "../lib/auth";
import { config } from "../lib/config";
import { userEmailOf } from "./users";

/** `__Secure-` in production: browsers then accept the cookie only over https and with Secure. */
export function sessionCookieName(env: Env): string {
  return config(env).production ? "__Secure-ffedge_session" : "ffedge_session";
}

/** Starts a session for the user and sets its cookie; a new cookie every time (rotation). */
export async function startSession<E extends { Bindings: Env }>(c: Context<E>, userId: string, now = new Date()): Promise<{ csrfToken: string }> {
  const secret = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const csrfToken = randomHex(32);
  const ttl = config(c.env).sessionTtlSeconds;
  await c.env.DB.prepare("INSERT INTO sessions (hash, user_id, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?, ?)")
    .bind(await hashToken(secret), userId, csrfToken, now.toISOString(), new Date(now.getTime() + ttl * 1000).toISOString())
    .run();
  setCookie(c, sessionCookieName(c.env), secret, {
    httpOnly: true,
    sameSite: "Strict",
    // Out of reach of /v1, /api, /uploads and /outputs: user content never sees the cookie.
    path: "/console",
    secure: config(c.env).production,
    maxAge: ttl,
  });
  return { csrfToken };
}

/** The session the request's cookie names, if it exists and has not expired. */
export async function readSession<E extends { Bindings: Env }>(c: Context<E>, now = new Date()): Promise<Session | null> {
  const secret = getCookie(c, sessionCookieName(c.env));
  if (!secret || secret.length > 128) return null;
  const hash = await hashToken(secret);
  const row = await c.env.DB.prepare(
    `SELECT s.hash, s.user_id, s.csrf_token, ${userEmailOf("s.user_id")} AS email FROM sessions s WHERE s.hash = ? AND s.expires_at > ?`,
  )
    .bind(hash, now.toISOString())
    .first<{ hash: string; user_id: string; csrf_token: string; email: string | null }>();
  return row ? { hash: row.hash, userId: row.user_id, email: row.email, csrfToken: row.csrf_token } : null;
}

export function clearSessionCookie<E extends { Bindings: Env }>(c: Context<E>): void {
  deleteCookie(c, sessionCookieName(c.env), { path: "/console", secure: config(c.env).production, httpOnly: true, sameSite: "Strict" });
}

export function revokeSession(db: D1Database, hash: string): D1PreparedStatement {
  return db.prepare("DELETE FROM sessions WHERE hash = ?").bind(hash);
}

export function revokeAllSessions(db: D1Database, userId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM sessions WHERE user_id = ?").bind(userId);
}

/** The user's sessions that have expired; a statement, for batches. */
export function dropExpiredSessionsOf(db: D1Database, userId: string, now = new Date()): D1PreparedStatement {
  return db.prepare("DELETE FROM sessions WHERE user_id = ? AND expires_at <= ?").bind(userId, now.toISOString());
}

/** Every expired session (the cron sweep); a statement, for batches. */
export function sweepExpiredSessions(db: D1Database, now: Date): D1PreparedStatement {
  return db.prepare("DELETE FROM sessions WHERE expires_at <= ?").bind(now.toISOString());
}

/** Which of these session hashes are unexpired sessions, each as `prefix` + hash (`credential`); a statement, for batches. */
export function liveSessionsStatement(db: D1Database, prefix: string, hashes: readonly string[], now = new Date()): D1PreparedStatement {
  return db.prepare(`SELECT ? || hash AS credential FROM sessions WHERE expires_at > ? AND hash IN (${hashes.map(() => "?").join(",")})`).bind(prefix, now.toISOString(), ...hashes);
}
