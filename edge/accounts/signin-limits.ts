import { AppError } from "../../shared/errors";

const WINDOW_SECONDS = 15 * 60;
/** Failures one client address may have on one account per window. */
export const ACCOUNT_FAILURE_LIMIT = 10;
/** Failures one client address may have across all accounts per window. */
export const ADDRESS_FAILURE_LIMIT = 30;
/**
 * Failures one account may have from all addresses together per window: guessing spread over
 * many addresses. Only that can lock an account, and a completed reset lifts it.
 */
export const ACCOUNT_WIDE_FAILURE_LIMIT = 100;

export interface SigninSubjects {
  account: string;
  accountFromAddress: string;
  address: string;
}

/**
 * A stranger's failures count against the stranger's own address first (on this account, and
 * on all), so that they cannot lock the owner out from elsewhere; the account-wide count only
 * stops guessing spread over many addresses.
 */
export function signinSubjects(email: string, clientAddress: string): SigninSubjects {
  return { account: `account:${email}`, accountFromAddress: `${accountFromAddressPrefix(email)}${clientAddress}`, address: `address:${clientAddress}` };
}

function accountFromAddressPrefix(email: string): string {
  return `account-from:${email}|`;
}

function limitOf(subjects: SigninSubjects, subject: string): number {
  if (subject === subjects.account) return ACCOUNT_WIDE_FAILURE_LIMIT;
  return subject === subjects.accountFromAddress ? ACCOUNT_FAILURE_LIMIT : ADDRESS_FAILURE_LIMIT;
}

/**
 * Refuses the attempt, before any password is checked, once any subject has used up its
 * failures for the current window: right or wrong, no password is tried until it ends.
 */
export async function assertSigninAllowed(db: D1Database, subjects: SigninSubjects, now = Date.now()): Promise<void> {
  const nowSeconds = Math.floor(now / 1000);
  const { results } = await db
    .prepare("SELECT subject, failures, window_ends_at FROM signin_failures WHERE subject IN (?, ?, ?) AND window_ends_at > ?")
    .bind(subjects.address, subjects.accountFromAddress, subjects.account, nowSeconds)
    .all<{ subject: string; failures: number; window_ends_at: number }>();
  const blocked = results.filter((row) => row.failures >= limitOf(subjects, row.subject));
  if (blocked.length === 0) return;
  const retryAfter = Math.max(1, Math.max(...blocked.map((row) => row.window_ends_at)) - nowSeconds);
  throw new AppError("TOO_MANY_ATTEMPTS", `Too many failed sign-ins; try again in ${retryAfter} s or reset the password.`, { retry_after: retryAfter }).withHeaders({ "Retry-After": String(retryAfter) });
}

export async function recordSigninFailure(db: D1Database, subjects: SigninSubjects, now = Date.now()): Promise<void> {
  await count(db, [subjects.address, subjects.accountFromAddress, subjects.account], now);
}

/**
 * Mails sent on request without a sign-in (sign-up verification, password reset), counted per
 * client address and recipient, so that a stranger's requests never use up the owner's; per
 * client address, so that nobody can send through us in bulk; and per recipient, a looser bound,
 * so that many addresses together cannot flood an inbox. Sign-up and reset share the counts:
 * both mail the same inbox. They live in signin_failures under their own subjects, in the same
 * windows, swept the same way.
 */
export const MAIL_PAIR_LIMIT = 5;
export const MAIL_RECIPIENT_LIMIT = 20;
export const MAIL_CLIENT_LIMIT = 30;

/**
 * Counts one mail request and refuses it (429 TOO_MANY_ATTEMPTS with Retry-After) once the
 * client has had its mails for the recipient or for all, or the recipient its mails. Every
 * request counts, whether or not the address has an account, so the answer reveals nothing
 * about that.
 */
export async function takeMailAllowance(db: D1Database, email: string, clientAddress: string, now = Date.now()): Promise<void> {
  const limits: Record<string, number> = { [`mail-from:${clientAddress}`]: MAIL_CLIENT_LIMIT, [`mail-pair:${email}|${clientAddress}`]: MAIL_PAIR_LIMIT, [`mail-to:${email}`]: MAIL_RECIPIENT_LIMIT };
  const rows = await count(db, Object.keys(limits), now);
  const over = rows.filter((row) => row.failures > limits[row.subject]!);
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

/** Every sign-in lock on the account, from any address: a completed reset proves the owner. */
export function clearSigninFailures(db: D1Database, email: string): D1PreparedStatement {
  return db
    .prepare("DELETE FROM signin_failures WHERE subject = ? OR (subject >= ? AND subject < ?)")
    .bind(`account:${email}`, accountFromAddressPrefix(email), `${accountFromAddressPrefix(email)}\uffff`);
}

/** A right password clears its own address's count on the account; strangers' counts stay. */
export function clearSigninFailuresFrom(db: D1Database, subjects: SigninSubjects): D1PreparedStatement {
  return db.prepare("DELETE FROM signin_failures WHERE subject = ?").bind(subjects.accountFromAddress);
}

/** Every ended window (the cron sweep); a statement, for batches. */
export function sweepEndedWindows(db: D1Database, now: Date): D1PreparedStatement {
  return db.prepare("DELETE FROM signin_failures WHERE window_ends_at <= ?").bind(Math.floor(now.getTime() / 1000));
}
