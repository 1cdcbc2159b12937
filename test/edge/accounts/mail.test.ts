import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildApp } from "../../../edge/app";
import { readOutbox } from "../../../edge/accounts/mail";
import { configProblems } from "../../../edge/lib/config";
import { expectProblem } from "../../helpers/problems";
import { newEmail } from "../console-api/client";
import { createUser, productionEnv } from "../helpers";

const API = "https://api.ffedge.net";
const PASSWORD = "correct horse battery";

afterEach(() => {
  vi.restoreAllMocks();
});

/** A production env as docs/deploy.md leaves it, with `EMAIL` recording what the binding is given. */
function production(sent: unknown[], overrides: Partial<Env> = {}): Env {
  return productionEnv({
    MAIL_FROM: "ffedge <no-reply@ffedge.net>",
    EMAIL: { send: async (message: unknown) => (sent.push(message), { messageId: "m1" }) } as unknown as SendEmail,
    ...overrides,
  });
}

/** The binding failing as the Workers API documents: an Error with a `code`. */
function failingBinding(code: string, attempts: unknown[] = []): SendEmail {
  return {
    send: async (message: unknown) => {
      attempts.push(message);
      throw Object.assign(new Error(`send failed: ${code}`), { code });
    },
  } as unknown as SendEmail;
}

async function post(target: Env, path: string, body: unknown, clientIp = `198.51.100.${Math.floor(Math.random() * 250)}`): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await buildApp().fetch(
    new Request(`${API}${path}`, { method: "POST", headers: { origin: API, "content-type": "application/json", "cf-connecting-ip": clientIp }, body: JSON.stringify(body) }),
    target,
    ctx,
  );
  await waitOnExecutionContext(ctx);
  return response;
}

async function verifiedUser(email: string): Promise<void> {
  const { userId } = await createUser();
  await env.DB.prepare("UPDATE users SET email = ?, email_verified_at = ? WHERE id = ?").bind(email, new Date().toISOString(), userId).run();
}

describe("account mail in production", () => {
  it("goes through the send_email binding, the sender as { email, name } from MAIL_FROM, never to the development outbox", async () => {
    const sent: unknown[] = [];
    const email = newEmail();
    const response = await post(production(sent), "/console/api/auth/signup", { email, password: PASSWORD });
    expect(response.status).toBe(202);
    expect(sent).toEqual([
      { from: { email: "no-reply@ffedge.net", name: "ffedge" }, to: email, subject: "Confirm your ffedge account", text: expect.stringMatching(new RegExp(`${API}/console/verify\\?token=[A-Za-z0-9_-]{43}`)) },
    ]);
    expect(await readOutbox(env.DB, email)).toEqual([]);
  });

  it("passes a bare MAIL_FROM address as the plain string the binding also takes", async () => {
    const sent: { from: unknown }[] = [];
    await post(production(sent, { MAIL_FROM: "no-reply@mail.ffedge.net" }), "/console/api/auth/forgot", { email: newEmail() });
    expect(sent.map((message) => message.from)).toEqual(["no-reply@mail.ffedge.net"]);
  });

  it("sets the session cookie as __Secure- with Secure", async () => {
    const sent: unknown[] = [];
    const email = newEmail();
    const target = production(sent);
    await post(target, "/console/api/auth/signup", { email, password: PASSWORD });
    const token = new URL(/https:\S+/.exec((sent[0] as { text: string }).text)![0]).searchParams.get("token");
    expect((await post(target, "/console/api/auth/verify", { token })).status).toBe(200);
    const signin = await post(target, "/console/api/auth/signin", { email, password: PASSWORD });
    expect(signin.status).toBe(200);
    expect(signin.headers.getSetCookie()).toEqual([expect.stringMatching(/^__Secure-ffedge_session=[A-Za-z0-9_-]{43}; Max-Age=1209600; Path=\/console; HttpOnly; Secure; SameSite=Strict$/)]);
  });
});

describe("a mail that could not be sent", () => {
  it("answers sign-up 503 MAIL_NOT_SENT with Retry-After, and logs and counts it under a stable msg", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    const response = await post(production([], { EMAIL: failingBinding("E_INTERNAL_SERVER_ERROR") }), "/console/api/auth/signup", { email: newEmail(), password: PASSWORD });
    const retryAfter = response.headers.get("retry-after");
    const problem = await expectProblem(response, 503, "MAIL_NOT_SENT");
    expect(retryAfter).toBe("60");
    expect(problem.retry_after).toBe(60);
    const lines = log.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
    expect(lines).toContainEqual({ msg: "mail not sent", purpose: "verify", code: "E_INTERNAL_SERVER_ERROR", error: "Error: send failed: E_INTERNAL_SERVER_ERROR" });
  });

  it("answers forgot-password 503 MAIL_NOT_SENT", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    await expectProblem(await post(production([], { EMAIL: failingBinding("E_DELIVERY_FAILED") }), "/console/api/auth/forgot", { email: newEmail() }), 503, "MAIL_NOT_SENT");
  });

  it("asks for a retry after an hour when the account's sending quota is spent", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    for (const code of ["E_RATE_LIMIT_EXCEEDED", "E_DAILY_LIMIT_EXCEEDED"]) {
      const response = await post(production([], { EMAIL: failingBinding(code) }), "/console/api/auth/forgot", { email: newEmail() });
      expect(response.headers.get("retry-after")).toBe("3600");
      expect((await expectProblem(response, 503, "MAIL_NOT_SENT")).retry_after).toBe(3600);
    }
  });

  it("answers the same whether or not the address has an account, for sign-up and for forgot-password", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const registered = newEmail();
    await verifiedUser(registered);
    const unknown = newEmail();
    for (const [path, body] of [
      ["/console/api/auth/signup", (email: string) => ({ email, password: PASSWORD })],
      ["/console/api/auth/forgot", (email: string) => ({ email })],
    ] as const) {
      const attempts: unknown[] = [];
      const target = production([], { EMAIL: failingBinding("E_INTERNAL_SERVER_ERROR", attempts) });
      const answers = [];
      for (const email of [registered, unknown]) {
        const response = await post(target, path, body(email));
        answers.push({ status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json() });
      }
      expect(answers[0]).toEqual(answers[1]);
      expect(answers[0]!.status).toBe(503);
      // Both addresses were really mailed (once each): the failure is the provider's, not a shortcut.
      expect(attempts).toHaveLength(2);
    }
  });

  it("leaves nothing behind on a failed sign-up: a retry gets a verification link, not the already-registered notice", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const email = newEmail();
    await expectProblem(await post(production([], { EMAIL: failingBinding("E_INTERNAL_SERVER_ERROR") }), "/console/api/auth/signup", { email, password: PASSWORD }), 503, "MAIL_NOT_SENT");
    expect(await env.DB.prepare("SELECT id FROM users WHERE email = ?").bind(email).first()).toBeNull();
    const sent: { subject: string }[] = [];
    expect((await post(production(sent), "/console/api/auth/signup", { email, password: PASSWORD })).status).toBe(202);
    expect(sent.map((message) => message.subject)).toEqual(["Confirm your ffedge account"]);
  });

  it("leaves the reset link it could not send unusable", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const email = newEmail();
    await verifiedUser(email);
    await expectProblem(await post(production([], { EMAIL: failingBinding("E_INTERNAL_SERVER_ERROR") }), "/console/api/auth/forgot", { email }), 503, "MAIL_NOT_SENT");
    const tokens = await env.DB.prepare("SELECT COUNT(*) AS n FROM mail_tokens t JOIN users u ON u.id = t.user_id WHERE u.email = ?").bind(email).first<{ n: number }>();
    expect(tokens!.n).toBe(0);
  });
});

describe("MAIL_FROM in production", () => {
  const mailFromProblems = (value: string | undefined) => configProblems(productionEnv({ MAIL_FROM: value as string })).filter((problem) => problem.setting === "MAIL_FROM");

  it.each(["ffedge <no-reply@ffedge.net>", '"ffedge, the service" <no-reply@mail.ffedge.net>', "no-reply@ffedge.net", "  ffedge <no-reply@ffedge.net>  "])("accepts %j", (value) => {
    expect(mailFromProblems(value)).toEqual([]);
  });

  it.each([
    ["the example.com sender wrangler.toml ships", "ffedge <no-reply@example.com>"],
    ["an example.org address", "no-reply@mail.example.org"],
    ["a localhost address", "ffedge <no-reply@localhost>"],
    ["an IP-literal domain", "no-reply@[203.0.113.7]"],
    ["a dotted-quad domain", "no-reply@203.0.113.7"],
    ["no domain", "ffedge <no-reply>"],
    ["an unclosed name form", "ffedge <no-reply@ffedge.net"],
    ["a header injection", "ffedge <no-reply@ffedge.net>\r\nBcc: x@ffedge.net"],
    ["an empty value", ""],
    ["no value", undefined],
  ])("refuses %s", (_label, value) => {
    expect(mailFromProblems(value)).toEqual([{ setting: "MAIL_FROM", problem: expect.stringContaining("Email Service") }]);
  });

  it("keeps the example sender in development, where mail goes to the outbox", () => {
    expect(env.MAIL_FROM).toContain("example.com");
    expect(configProblems(env)).toEqual([]);
  });

  it("makes a production Worker with the shipped sender answer 500 CONFIG_INVALID", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    await expectProblem(await post(production([], { MAIL_FROM: "ffedge <no-reply@example.com>" }), "/console/api/auth/forgot", { email: newEmail() }), 500, "CONFIG_INVALID");
  });
});
