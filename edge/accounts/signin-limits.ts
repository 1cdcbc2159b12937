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
  const nowSeconds = Math.floor(now / 1000);
  const statement = db.prepare(
    `INSERT INTO signin_failures (subject, failures, window_ends_at) VALUES (?, 1, ?)
     ON CONFLICT(subject) DO UPDATE SET
       failures = CASE WHEN window_ends_at <= ?3 THEN 1 ELSE failures + 1 END,
       window_ends_at = CASE WHEN window_ends_at <= ?3 THEN excluded.window_ends_at ELSE window_ends_at END`,
  );
  await db.batch([subjects.account, subjects.address].map((subject) => statement.bind(subject, nowSeconds + WINDOW_SECONDS, nowSeconds)));
}

export function clearSigninFailures(db: D1Database, email: string): D1PreparedStatement {
  return db.prepare("DELETE FROM signin_failures WHERE subject = ?").bind(`account:${email}`);
}
