import { createRoute } from "@hono/zod-openapi";
import { ChangePasswordSchema, DeleteAccountSchema } from "../../../shared/schemas/accounts";
import { eraseAccount } from "../../accounts/erase";
import { changePassword } from "../../accounts/password-changes";
import { clearSessionCookie, startSession } from "../../accounts/sessions";
import { requirePassword } from "../../accounts/signin";
import { tasksOfUser } from "../../tasks/erasable";
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
    await changePassword(c.env.DB, c.get("userId"), { current: body.current_password, next: body.new_password });
    // Every session ended, this one included: the browser gets a fresh cookie and CSRF token.
    await startSession(c, c.get("userId"));
    return c.body(null, 204);
  },
);

account.openapi(
  createRoute({ method: "delete", path: "/console/api/account", hide: true, request: json(DeleteAccountSchema), responses: { 204: { description: "The account and everything it owned are gone" }, ...problems } }),
  async (c) => {
    const user = await requirePassword(c.env.DB, c.get("userId"), c.req.valid("json").password);
    await eraseAccount(c.env, user, tasksOfUser(c.env, user.id));
    clearSessionCookie(c);
    return c.body(null, 204);
  },
);
