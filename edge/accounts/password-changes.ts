import { config } from "../lib/config";
import { sendMail } from "./mail";
import { consumeMailToken, dropMailTokensOf, invalidLink, issueResetToken, revokeMailToken } from "./mail-tokens";
import { hashPassword } from "./passwords";
import { revokeAllSessions } from "./sessions";
import { requirePassword } from "./signin";
import { clearSigninFailures } from "./signin-limits";
import { findUser, markEmailVerified, setPassword } from "./users";

/**
 * A reset link by mail. An address without an account is told so rather than sent nothing: the
 * answer waits for the mail, so both kinds of address must cost one send, and fail alike when
 * sending fails.
 */
export async function sendResetLink(env: Env, email: string): Promise<void> {
  const consoleUrl = config(env).edgeUrl;
  const issued = await issueResetToken(env.DB, email);
  if (!issued) {
    await sendMail(env, {
      purpose: "no-account",
      to: email,
      subject: "No ffedge account uses this address",
      text: `Someone (perhaps you) asked to reset the ffedge password of this address, but no ffedge account uses it, so no password was changed.\n\nCreate an account: ${consoleUrl}/console/signup\n\nIf it was not you, you can ignore this mail.\n`,
    });
    return;
  }
  const { token } = issued;
  try {
    await sendMail(env, {
      purpose: "reset",
      to: email,
      subject: "Reset your ffedge password",
      text: `Choose a new ffedge password here (the link works once, for 1 hour):\n\n${consoleUrl}/console/reset?token=${token}\n\nIf you did not ask for this, ignore this mail: your password stays as it is.\n`,
    });
  } catch (error) {
    await revokeMailToken(env.DB, token);
    throw error;
  }
}

/**
 * A reset link followed with a new password. The link proves the mailbox, so the address counts
 * as verified; every other link and session of the user ends, and a completed reset lifts the
 * sign-in locks on the account.
 */
export async function resetPassword(db: D1Database, token: string, password: string): Promise<void> {
  const link = await consumeMailToken(db, token, "reset");
  const user = link ? await findUser(db, link.userId) : null;
  if (!user) throw invalidLink();
  await db.batch([
    setPassword(db, user.id, await hashPassword(password)),
    markEmailVerified(db, user.id),
    dropMailTokensOf(db, user.id),
    revokeAllSessions(db, user.id),
    clearSigninFailures(db, user.email ?? ""),
  ]);
}

/** The signed-in user's new password, once the current one is right; every session ends, the caller's too (it starts a fresh one). */
export async function changePassword(db: D1Database, userId: string, passwords: { current: string; next: string }): Promise<void> {
  const user = await requirePassword(db, userId, passwords.current);
  await db.batch([setPassword(db, user.id, await hashPassword(passwords.next)), revokeAllSessions(db, user.id)]);
}
