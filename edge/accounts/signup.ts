import { config } from "../lib/config";
import { sendMail } from "./mail";
import { USER_HAS_MAIL_TOKENS, dropMailTokensOf, dropOtherVerifyTokens, invalidLink, readVerifyToken, verifyTokenForNewUser } from "./mail-tokens";
import { USER_HAS_API_KEYS } from "./api-keys";
import { hashPassword } from "./passwords";
import { claimPendingPassword, createUser, findUser, forgetUnsentSignUpStatement, newUserId } from "./users";

/*
 * Sign-up answers only once the mail is sent, so that a mail that was not is said (503
 * MAIL_NOT_SENT, Retry-After) instead of promised. Every address gets exactly one mail either way
 * (a verification link or an already-registered notice), so the answer, a failure included,
 * never tells whether it has an account.
 */

/**
 * A sign-up: a new user holding the chosen password until the address is verified, and its
 * verification link by mail. Only a sign-up that creates the user carries a password: for an
 * address that already has a user (verified, pending, or made by the key CLI), the requester's
 * password is dropped and the inbox is told to use a reset, which proves the mailbox when the
 * password is chosen.
 */
export async function signUp(env: Env, email: string, password: string): Promise<void> {
  const consoleUrl = config(env).edgeUrl;
  const id = newUserId();
  const verify = await verifyTokenForNewUser(env.DB, id);
  const { created } = await createUser(env.DB, email, new Date(), { id, pendingPasswordHash: await hashPassword(password), alongside: [verify.statement] });
  if (!created) {
    await sendMail(env, {
      purpose: "already-registered",
      to: email,
      subject: "You already have an ffedge account",
      text: `Someone (perhaps you) tried to sign up to ffedge with this address, which already has an account. The password given was not used.\n\nSign in: ${consoleUrl}/console/signin\nNo password yet, or forgot it? Set one here: ${consoleUrl}/console/forgot\n\nIf it was not you, you can ignore this mail.\n`,
    });
    return;
  }
  try {
    await sendMail(env, {
      purpose: "verify",
      to: email,
      subject: "Confirm your ffedge account",
      text: `Welcome to ffedge. Confirm your address to finish signing up (the link works once, for 24 hours):\n\n${consoleUrl}/console/verify?token=${verify.token}\n\nIf you did not sign up, ignore this mail: nothing happens without the link.\n`,
    });
  } catch (error) {
    await forgetUnsentSignUp(env.DB, id);
    throw error;
  }
}

/**
 * Undoes a sign-up whose verification mail was not sent, so that asking again gets a new link
 * rather than the already-registered notice: the user goes with its verification tokens, unless
 * it got a password, a key or another mailed link meanwhile.
 */
async function forgetUnsentSignUp(db: D1Database, userId: string): Promise<void> {
  await db.batch([dropMailTokensOf(db, userId, "verify"), forgetUnsentSignUpStatement(db, userId, [USER_HAS_API_KEYS, USER_HAS_MAIL_TOKENS])]);
}

/**
 * A verification link followed: the sign-up's password becomes the account's and the address is
 * verified. An account that got a password another way (a reset by its owner) keeps it; a link
 * followed a second time finds the address verified by the first (`already_verified`).
 */
export async function verifyAddress(db: D1Database, token: string): Promise<{ verified: true; already_verified?: true }> {
  const link = await readVerifyToken(db, token);
  if (!link) throw invalidLink();
  const [claimed] = await db.batch([claimPendingPassword(db, link.userId), await dropOtherVerifyTokens(db, link.userId, token)]);
  if (claimed?.meta.changes) return { verified: true };
  if ((await findUser(db, link.userId))?.email_verified_at) return { verified: true, already_verified: true };
  throw invalidLink();
}
