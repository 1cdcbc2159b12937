import { USER_HAS_TASKS } from "../tasks/repository";

const DAY_MS = 24 * 60 * 60 * 1000;
/** A sign-up nobody confirmed within this long is forgotten (its link lived 24 h). */
const UNVERIFIED_TTL_MS = 7 * DAY_MS;
const OUTBOX_TTL_MS = 7 * DAY_MS;

/**
 * Cron: drops what the accounts leave behind once it can no longer be used: expired sessions and
 * mail tokens, ended sign-in windows, old development mails, and sign-ups never confirmed (users
 * without a password, key, task or file).
 */
export async function sweepAccountRecords(env: Env, now = new Date()): Promise<Record<string, number>> {
  const db = env.DB;
  const iso = now.toISOString();
  const [sessions, tokens, failures, outbox] = await db.batch([
    db.prepare("DELETE FROM sessions WHERE expires_at <= ?").bind(iso),
    db.prepare("DELETE FROM mail_tokens WHERE expires_at <= ?").bind(iso),
    db.prepare("DELETE FROM signin_failures WHERE window_ends_at <= ?").bind(Math.floor(now.getTime() / 1000)),
    db.prepare("DELETE FROM dev_outbox WHERE created_at <= ?").bind(new Date(now.getTime() - OUTBOX_TTL_MS).toISOString()),
  ]);
  const unconfirmed = await db
    .prepare(
      `DELETE FROM users WHERE email_verified_at IS NULL AND password_hash IS NULL AND email IS NOT NULL AND created_at <= ?
         AND NOT EXISTS (SELECT 1 FROM api_keys k WHERE k.user_id = users.id)
         AND NOT EXISTS (SELECT 1 FROM mail_tokens t WHERE t.user_id = users.id)
         AND NOT ${USER_HAS_TASKS}
         AND NOT EXISTS (SELECT 1 FROM files f WHERE f.user_id = users.id)`,
    )
    .bind(new Date(now.getTime() - UNVERIFIED_TTL_MS).toISOString())
    .run();
  const changes = (result: D1Result | undefined) => result?.meta.changes ?? 0;
  return { sessions: changes(sessions), mail_tokens: changes(tokens), signin_failures: changes(failures), dev_outbox: changes(outbox), unconfirmed_users: changes(unconfirmed) };
}
