import { createRoute } from "@hono/zod-openapi";
import { ChangePasswordSchema, DeleteAccountSchema } from "../../../shared/schemas/accounts";
import { AppError } from "../../../shared/errors";
import { eraseAccount } from "../../accounts/erase";
import { hashPassword, verifyPassword } from "../../accounts/passwords";
import { clearSessionCookie, revokeAllSessions, startSession } from "../../accounts/sessions";
import { findUser, setPassword } from "../../accounts/users";
import { requireSession } from "./guards";
import { createApp } from "../../lib/openapi";
import { json, problems } from "./routes";

/** The signed-in user's password and the account itself. */
export const account = createApp();
account.use("/console/api/account", requireSession);
account.use("/console/api/account/*", requireSession);

account.openapi(
  createRoute({ method: "post", path: "/console/api/account/password", hide: true, request: json(ChangePasswordSchema), responses: { 204: { description: "Changed; the session cookie is replaced" }, ...problems } }),
  async (c) => {
    const body = c.req.valid("json");
    const user = await requirePassword(c.env.DB, c.get("userId"), body.current_password);
    // Every session ends, this one included: the browser gets a fresh cookie and CSRF token.
    await c.env.DB.batch([setPassword(c.env.DB, user.id, await hashPassword(body.new_password)), revokeAllSessions(c.env.DB, user.id)]);
    await startSession(c, user.id);
    return c.body(null, 204);
  },
);

account.openapi(
  createRoute({ method: "delete", path: "/console/api/account", hide: true, request: json(DeleteAccountSchema), responses: { 204: { description: "The account and everything it owned are gone" }, ...problems } }),
  async (c) => {
    const user = await requirePassword(c.env.DB, c.get("userId"), c.req.valid("json").password);
    await eraseAccount(c.env, user.id, user.email);
    clearSessionCookie(c);
    return c.body(null, 204);
  },
);

async function requirePassword(db: D1Database, userId: string, password: string) {
  const user = await findUser(db, userId);
  if (!user?.password_hash || !(await verifyPassword(password, user.password_hash))) throw new AppError("INVALID_CREDENTIALS", "The password is wrong.");
  return user;
}
