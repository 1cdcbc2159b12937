import { createRoute } from "@hono/zod-openapi";
import { CredentialsSchema, ForgotSchema, MessageSchema, ResetSchema, SessionSchema, SigninSchema, TokenSchema } from "../../../shared/schemas/accounts";
import { invalidLink, isMailTokenLive } from "../../accounts/mail-tokens";
import { resetPassword, sendResetLink } from "../../accounts/password-changes";
import { clearSessionCookie, readSession, revokeSession, startSession } from "../../accounts/sessions";
import { signIn } from "../../accounts/signin";
import { takeMailAllowance } from "../../accounts/signin-limits";
import { signUp, verifyAddress } from "../../accounts/signup";
import { clientAddress } from "../../lib/auth";
import { requireSession } from "./guards";
import { createApp } from "../../lib/openapi";
import { json, problems } from "./routes";

/** Sign-up, address verification, sign-in and out, password reset: `/console/api/auth/*` and the session. */
export const auth = createApp();

const SIGNUP_MESSAGE = "If the address can be registered, a verification link is on its way.";
const FORGOT_MESSAGE = "If an account uses this address, a reset link is on its way.";

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
  async (c) => c.json(await verifyAddress(c.env.DB, c.req.valid("json").token), 200),
);

auth.openapi(
  createRoute({ method: "post", path: "/console/api/auth/reset/check", hide: true, request: json(TokenSchema), responses: { 204: { description: "The reset link still works" }, ...problems } }),
  async (c) => {
    if (!(await isMailTokenLive(c.env.DB, c.req.valid("json").token, "reset"))) throw invalidLink();
    return c.body(null, 204);
  },
);

auth.openapi(
  createRoute({ method: "post", path: "/console/api/auth/signin", hide: true, request: json(SigninSchema), responses: { 200: { description: "Signed in", content: { "application/json": { schema: SessionSchema } } }, ...problems } }),
  async (c) => {
    const { email, password } = c.req.valid("json");
    const previous = await readSession(c);
    const user = await signIn(c.env.DB, { email, password, clientAddress: clientAddress(c), previousSession: previous?.hash ?? null });
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
    await resetPassword(c.env.DB, body.token, body.password);
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
