import { AppError } from "../../shared/errors";

const WINDOW_SECONDS = 15 * 60;
export const ACCOUNT_FAILURE_LIMIT = 10;
export const ADDRESS_FAILURE_LIMIT = 30;

export interface SigninSubjects {
  account: string;
  address: string;
}

/** One account's and one client address's failed sign-ins are counted apart. */
export function signinSubjects(email: string, clientAddress: string): SigninSubjects {
  return { account: `account:${email}`, address: `address:${clientAddress}` };
}

/**
 * Refuses the attempt, before any password is checked, once either subject has used up its
 * failures for the current window: right or wrong, no password is tried until it ends.
 */
export async function assertSigninAllowed(db: D1Database, subjects: SigninSubjects, now = Date.now()): Promise<void> {
  const nowSeconds = Math.floor(now / 1000);
  const { results } = await db
    .prepare("SELECT subject, failures, window_ends_at FROM signin_failures WHERE subject IN (?, ?) AND window_ends_at > ?")
    .bind(subjects.account, subjects.address, nowSeconds)
    .all<{ subject: string; failures: number; window_ends_at: number }>();
  const blocked = results.filter((row) => row.failures >= (row.subject === subjects.account ? ACCOUNT_FAILURE_LIMIT : ADDRESS_FAILURE_LIMIT));
  if (blocked.length === 0) return;
  const retryAfter = Math.max(1, Math.max(...blocked.map((row) => row.window_ends_at)) - nowSeconds);
  throw new AppError("TOO_MANY_ATTEMPTS", `Too many failed sign-ins; try again in ${retryAfter} s or reset the password.`, { retry_after: retryAfter }).withHeaders({ "Retry-After": String(retryAfter) });
}

export async function recordSigninFailure(db: D1Database, subjects: SigninSubjects, now = Date.now()): Promise<void> {
  await count(db, [subjects.account, subjects.address], now);
}

/**
 * Mails sent on request without a sign-in (sign-up verification, password reset), counted per
 * recipient, so that nobody can flood an inbox, and per client address, so that nobody can send
 * through us in bulk. Sign-up and reset share the counts: both mail the same inbox. They live
 * in signin_failures under their own subjects, in the same windows, swept the same way.
 */
export const MAIL_RECIPIENT_LIMIT = 5;
export const MAIL_CLIENT_LIMIT = 30;

/**
 * Counts one mail request and refuses it (429 TOO_MANY_ATTEMPTS with Retry-After) once the
 * recipient or the client has had its mails for the window. Every request counts, whether or
 * not the address has an account, so the answer reveals nothing about that.
 */
export async function takeMailAllowance(db: D1Database, email: string, clientAddress: string, now = Date.now()): Promise<void> {
  const recipient = `mail-to:${email}`;
  const rows = await count(db, [recipient, `mail-from:${clientAddress}`], now);
  const over = rows.filter((row) => row.failures > (row.subject === recipient ? MAIL_RECIPIENT_LIMIT : MAIL_CLIENT_LIMIT));
  if (over.length === 0) return;
  const retryAfter = Math.max(1, Math.max(...over.map((row) => row.window_ends_at)) - Math.floor(now / 1000));
  throw new AppError("TOO_MANY_ATTEMPTS", `Too many mails asked for; try again in ${retryAfter} s.`, { retry_after: retryAfter }).withHeaders({ "Retry-After": String(retryAfter) });
}

type CountRow = { subject: string; failures: number; window_ends_at: number };

/** Adds one to each subject's count in its current window (a new window once the last has ended). */
async function count(db: D1Database, subjects: string[], now: number): Promise<CountRow[]> {
  const nowSeconds = Math.floor(now / 1000);
  const statement = db.prepare(
    `INSERT INTO signin_failures (subject, failures, window_ends_at) VALUES (?, 1, ?)
     ON CONFLICT(subject) DO UPDATE SET
       failures = CASE WHEN window_ends_at <= ?3 THEN 1 ELSE failures + 1 END,
       window_ends_at = CASE WHEN window_ends_at <= ?3 THEN excluded.window_ends_at ELSE window_ends_at END
     RETURNING subject, failures, window_ends_at`,
  );
  const results = await db.batch<CountRow>(subjects.map((subject) => statement.bind(subject, nowSeconds + WINDOW_SECONDS, nowSeconds)));
  return results.flatMap((result) => result.results);
}

export function clearSigninFailures(db: D1Database, email: string): D1PreparedStatement {
  return db.prepare("DELETE FROM signin_failures WHERE subject = ?").bind(`account:${email}`);
}
