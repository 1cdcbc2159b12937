import { AppError } from "../../shared/errors";
import { hasLiveVerifyToken } from "./mail-tokens";
import { burnPasswordCheck, verifyPassword } from "./passwords";
import { dropExpiredSessionsOf, revokeSession } from "./sessions";
import { assertSigninAllowed, clearSigninFailuresFrom, recordSigninFailure, signinSubjects } from "./signin-limits";
import { type UserRow, findUser, findUserByEmail } from "./users";

/**
 * Checks a sign-in and settles what it leaves behind; the caller then starts the session.
 * Before verification the password is the sign-up's pending one, while its link works: a right
 * one is told EMAIL_NOT_VERIFIED, which only someone who chose that password learns. Rotation:
 * whatever session this browser had (`previousSession`) ends here (no fixation), and the user's
 * expired ones go.
 */
export async function signIn(db: D1Database, attempt: { email: string; password: string; clientAddress: string; previousSession: string | null }): Promise<UserRow> {
  const subjects = signinSubjects(attempt.email, attempt.clientAddress);
  await assertSigninAllowed(db, subjects);
  const user = await findUserByEmail(db, attempt.email);
  const stored = user ? await passwordToCheck(db, user) : null;
  const valid = stored ? await verifyPassword(attempt.password, stored) : (await burnPasswordCheck(attempt.password), false);
  if (!user || !valid) {
    await recordSigninFailure(db, subjects);
    throw new AppError("INVALID_CREDENTIALS", "The email address or the password is wrong.");
  }
  if (!user.email_verified_at) throw new AppError("EMAIL_NOT_VERIFIED", "Follow the link in the verification mail before signing in.");
  await db.batch([clearSigninFailuresFrom(db, subjects), dropExpiredSessionsOf(db, user.id), ...(attempt.previousSession ? [revokeSession(db, attempt.previousSession)] : [])]);
  return user;
}

async function passwordToCheck(db: D1Database, user: UserRow): Promise<string | null> {
  if (user.password_hash) return user.password_hash;
  if (!user.pending_password_hash || user.email_verified_at) return null;
  return (await hasLiveVerifyToken(db, user.id)) ? user.pending_password_hash : null;
}

/** The signed-in user, once the password given again is right (changing it, deleting the account). */
export async function requirePassword(db: D1Database, userId: string, password: string): Promise<UserRow> {
  const user = await findUser(db, userId);
  if (!user?.password_hash || !(await verifyPassword(password, user.password_hash))) throw new AppError("INVALID_CREDENTIALS", "The password is wrong.");
  return user;
}
