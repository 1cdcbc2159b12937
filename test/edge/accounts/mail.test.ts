import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../../edge/app";
import { readOutbox } from "../../../edge/accounts/mail";
import { newEmail } from "../console-api/client";
import { productionEnv } from "../helpers";

const API = "https://api.ffedge.net";

/** A production env as docs/deploy.md leaves it, with `EMAIL` recording what the binding is given. */
function production(sent: unknown[]): Env {
  return productionEnv({
    MAIL_FROM: "ffedge <no-reply@ffedge.net>",
    EMAIL: { send: async (message: unknown) => (sent.push(message), { messageId: "m1" }) } as unknown as SendEmail,
  });
}

describe("account mail in production", () => {
  it("goes through the send_email binding from MAIL_FROM, never to the development outbox", async () => {
    const sent: unknown[] = [];
    const email = newEmail();
    const ctx = createExecutionContext();
    const response = await buildApp().fetch(
      new Request(`${API}/console/api/auth/signup`, { method: "POST", headers: { origin: API, "content-type": "application/json" }, body: JSON.stringify({ email, password: "correct horse battery" }) }),
      production(sent),
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(202);
    expect(sent).toEqual([{ from: "ffedge <no-reply@ffedge.net>", to: email, subject: "Confirm your ffedge account", text: expect.stringMatching(new RegExp(`${API}/console/verify\\?token=[A-Za-z0-9_-]{43}`)) }]);
    expect(await readOutbox(env.DB, email)).toEqual([]);
  });

  it("sets the session cookie as __Secure- with Secure", async () => {
    const sent: unknown[] = [];
    const email = newEmail();
    const target = production(sent);
    const post = async (path: string, body: unknown) => {
      const ctx = createExecutionContext();
      const response = await buildApp().fetch(new Request(`${API}${path}`, { method: "POST", headers: { origin: API, "content-type": "application/json" }, body: JSON.stringify(body) }), target, ctx);
      await waitOnExecutionContext(ctx);
      return response;
    };
    await post("/console/api/auth/signup", { email, password: "correct horse battery" });
    const token = new URL(/https:\S+/.exec((sent[0] as { text: string }).text)![0]).searchParams.get("token");
    expect((await post("/console/api/auth/verify", { token })).status).toBe(200);
    const signin = await post("/console/api/auth/signin", { email, password: "correct horse battery" });
    expect(signin.status).toBe(200);
    expect(signin.headers.getSetCookie()).toEqual([expect.stringMatching(/^__Secure-ffedge_session=[A-Za-z0-9_-]{43}; Max-Age=1209600; Path=\/console; HttpOnly; Secure; SameSite=Strict$/)]);
  });
});
