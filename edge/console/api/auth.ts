import { createRoute } from "@hono/zod-openapi";
import { CredentialsSchema, ForgotSchema, MessageSchema, ResetSchema, SessionSchema, SigninSchema, TokenSchema } from "../../../shared/schemas/accounts";
import { AppError } from "../../../shared/errors";
import { sendMail } from "../../accounts/mail";
import { consumeMailToken, dropOtherVerifyTokens, isMailTokenLive, issueResetToken, pendingPasswordHash, revokeMailToken, useVerifyToken, verifyTokenForNewUser } from "../../accounts/mail-tokens";
import { burnPasswordCheck, hashPassword, verifyPassword } from "../../accounts/passwords";
import { clearSessionCookie, readSession, revokeAllSessions, revokeSession, startSession } from "../../accounts/sessions";
import { assertSigninAllowed, clearSigninFailures, clearSigninFailuresFrom, recordSigninFailure, signinSubjects, takeMailAllowance } from "../../accounts/signin-limits";
import { createUser, findUser, findUserByEmail, forgetUnsentSignUp, newUserId, setFirstPassword, setPassword } from "../../accounts/users";
import { clientAddress } from "../../lib/auth";
import { config } from "../../lib/config";
import { requireSession } from "./guards";
import { createApp } from "../../lib/openapi";
import { json, problems } from "./routes";

/** Sign-up, address verification, sign-in and out, password reset: `/console/api/auth/*` and the session. */
export const auth = createApp();

const SIGNUP_MESSAGE = "If the address can be registered, a verification link is on its way.";
const FORGOT_MESSAGE = "If an account uses this address, a reset link is on its way.";

/*
 * Sign-up and forgot-password answer only once the mail is sent, so that a mail that was not
 * is said (503 MAIL_NOT_SENT, Retry-After) instead of promised. Every address gets exactly one
 * mail either way (a verification link or an already-registered notice; a reset link or a
 * no-account notice), so the answer, a failure included, never tells whether it has an account.
 */

auth.openapi(
  createRoute({ method: "post", path: "/console/api/auth/signup", hide: true, request: json(CredentialsSchema), responses: { 202: { description: "Accepted", content: { "application/json": { schema: MessageSchema } } }, ...problems } }),
  async (c) => {
    const { email, password } = c.req.valid("json");
    await takeMailAllowance(c.env.DB, email, clientAddress(c));
    await signUp(c.env, email, password);
    return c.json({ message: SIGNUP_MESSAGE }, 202);
  },
);

auth.openapi(
  createRoute({ method: "post", path: "/console/api/auth/verify", hide: true, request: json(TokenSchema), responses: { 200: { description: "Verified; `already_verified` when the link had been followed before" }, ...problems } }),
  async (c) => {
    const sent = c.req.valid("json").token;
    const token = await useVerifyToken(c.env.DB, sent);
    if (!token) throw invalidToken();
    // An account that got a password another way (a reset by its owner) keeps it; a link
    // followed a second time finds the address verified by the first.
    const claimed = token.passwordHash
      ? (await c.env.DB.batch([setFirstPassword(c.env.DB, token.userId, token.passwordHash), await dropOtherVerifyTokens(c.env.DB, token.userId, sent)]))[0]
      : undefined;
    if (claimed?.meta.changes) return c.json({ verified: true }, 200);
    if ((await findUser(c.env.DB, token.userId))?.email_verified_at) return c.json({ verified: true, already_verified: true }, 200);
    throw invalidToken();
  },
);

auth.openapi(
  createRoute({ method: "post", path: "/console/api/auth/reset/check", hide: true, request: json(TokenSchema), responses: { 204: { description: "The reset link still works" }, ...problems } }),
  async (c) => {
    if (!(await isMailTokenLive(c.env.DB, c.req.valid("json").token, "reset"))) throw invalidToken();
    return c.body(null, 204);
  },
);

auth.openapi(
  createRoute({ method: "post", path: "/console/api/auth/signin", hide: true, request: json(SigninSchema), responses: { 200: { description: "Signed in", content: { "application/json": { schema: SessionSchema } } }, ...problems } }),
  async (c) => {
    const { email, password } = c.req.valid("json");
    const subjects = signinSubjects(email, clientAddress(c));
    await assertSigninAllowed(c.env.DB, subjects);
    const user = await findUserByEmail(c.env.DB, email);
    // Before verification the password lives in the sign-up's mail token: a right one is told
    // EMAIL_NOT_VERIFIED, which only someone who chose that password learns.
    const stored = user ? (user.password_hash ?? (await pendingPasswordHash(c.env.DB, user.id))) : null;
    const valid = stored ? await verifyPassword(password, stored) : (await burnPasswordCheck(password), false);
    if (!user || !valid) {
      await recordSigninFailure(c.env.DB, subjects);
      throw new AppError("INVALID_CREDENTIALS", "The email address or the password is wrong.");
    }
    if (!user.email_verified_at) throw new AppError("EMAIL_NOT_VERIFIED", "Follow the link in the verification mail before signing in.");
    // Rotation: whatever session this browser had ends here (no fixation), and expired ones go.
    const previous = await readSession(c);
    await c.env.DB.batch([
      clearSigninFailuresFrom(c.env.DB, subjects),
      c.env.DB.prepare("DELETE FROM sessions WHERE user_id = ? AND expires_at <= ?").bind(user.id, new Date().toISOString()),
      ...(previous ? [revokeSession(c.env.DB, previous.hash)] : []),
    ]);
    const { csrfToken } = await startSession(c, user.id);
    c.header("cache-control", "no-store");
    return c.json({ user_id: user.id, email: user.email, csrf_token: csrfToken }, 200);
  },
);

auth.use("/console/api/auth/signout", requireSession);
auth.openapi(
  createRoute({ method: "post", path: "/console/api/auth/signout", hide: true, responses: { 204: { description: "Signed out" }, ...problems } }),
  async (c) => {
    await revokeSession(c.env.DB, c.get("session")!.hash).run();
    clearSessionCookie(c);
    return c.body(null, 204);
  },
);

auth.openapi(
  createRoute({ method: "post", path: "/console/api/auth/forgot", hide: true, request: json(ForgotSchema), responses: { 202: { description: "Accepted", content: { "application/json": { schema: MessageSchema } } }, ...problems } }),
  async (c) => {
    const { email } = c.req.valid("json");
    await takeMailAllowance(c.env.DB, email, clientAddress(c));
    await sendResetLink(c.env, email);
    return c.json({ message: FORGOT_MESSAGE }, 202);
  },
);

auth.openapi(
  createRoute({ method: "post", path: "/console/api/auth/reset", hide: true, request: json(ResetSchema), responses: { 200: { description: "Password set" }, ...problems } }),
  async (c) => {
    const body = c.req.valid("json");
    const token = await consumeMailToken(c.env.DB, body.token, "reset");
    const user = token ? await findUser(c.env.DB, token.userId) : null;
    if (!user) throw invalidToken();
    const db = c.env.DB;
    await db.batch([
      setPassword(db, user.id, await hashPassword(body.password)),
      db.prepare("DELETE FROM mail_tokens WHERE user_id = ?").bind(user.id),
      revokeAllSessions(db, user.id),
      clearSigninFailures(db, user.email ?? ""),
    ]);
    return c.json({ reset: true }, 200);
  },
);

auth.use("/console/api/session", requireSession);
auth.openapi(
  createRoute({ method: "get", path: "/console/api/session", hide: true, responses: { 200: { description: "The session", content: { "application/json": { schema: SessionSchema } } }, ...problems } }),
  async (c) => {
    const session = c.get("session")!;
    c.header("cache-control", "no-store");
    return c.json({ user_id: session.userId, email: session.email, csrf_token: session.csrfToken }, 200);
  },
);

/**
 * Only a sign-up that creates the user carries a password: for an address that already has a
 * user (verified, pending, or made by the key CLI), the requester's password is dropped and the
 * inbox is told to use a reset, which proves the mailbox when the password is chosen.
 */
async function signUp(env: Env, email: string, password: string): Promise<void> {
  const passwordHash = await hashPassword(password);
  const consoleUrl = config(env).edgeUrl;
  const id = newUserId();
  const verify = await verifyTokenForNewUser(env.DB, id, passwordHash);
  const { user, created } = await createUser(env.DB, email, new Date(), { id, alongside: [verify.statement] });
  if (!created) {
    await sendMail(env, {
      purpose: "already-registered",
      to: email,
      subject: "You already have an ffedge account",
      text: `Someone (perhaps you) tried to sign up to ffedge with this address, which already has an account. The password given was not used.\n\nSign in: ${consoleUrl}/console/signin\nNo password yet, or forgot it? Set one here: ${consoleUrl}/console/forgot\n\nIf it was not you, you can ignore this mail.\n`,
    });
    return;
  }
  const token = verify.token;
  try {
    await sendMail(env, {
      purpose: "verify",
      to: email,
      subject: "Confirm your ffedge account",
      text: `Welcome to ffedge. Confirm your address to finish signing up (the link works once, for 24 hours):\n\n${consoleUrl}/console/verify?token=${token}\n\nIf you did not sign up, ignore this mail: nothing happens without the link.\n`,
    });
  } catch (error) {
    await forgetUnsentSignUp(env.DB, user.id);
    throw error;
  }
}

/**
 * An address without an account is told so rather than sent nothing: the answer waits for the
 * mail, so both kinds of address must cost one send, and fail alike when sending fails.
 */
async function sendResetLink(env: Env, email: string): Promise<void> {
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

const invalidToken = () => new AppError("INVALID_TOKEN", "This link is invalid, was already used or has expired; ask for a new one.");
