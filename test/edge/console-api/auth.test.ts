import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hashPassword } from "../../../edge/accounts/passwords";
import { ACCOUNT_FAILURE_LIMIT, ACCOUNT_WIDE_FAILURE_LIMIT, ADDRESS_FAILURE_LIMIT, MAIL_PAIR_LIMIT, recordSigninFailure, signinSubjects } from "../../../edge/accounts/signin-limits";
import { expectProblem } from "../../helpers/problems";
import { createUser } from "../helpers";
import { ConsoleClient, PASSWORD, newEmail, outbox, signedInUser, waitForLink, waitForMail } from "./client";

describe("sign-up and address verification", () => {
  it("mails a verification link; following it lets the user sign in with the password chosen", async () => {
    const email = newEmail();
    const client = new ConsoleClient();
    const response = await client.signUp(email.toUpperCase());
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ message: "If the address can be registered, a verification link is on its way." });
    const link = await waitForLink(email, "verify");
    expect(link).toMatch(/^http:\/\/127\.0\.0\.1:8787\/console\/verify\?token=[A-Za-z0-9_-]{43}$/);

    await expectProblem(await client.signIn(email), 403, "EMAIL_NOT_VERIFIED");
    expect((await client.follow(email, "verify")).status).toBe(200);
    const signin = await client.signIn(email);
    expect(signin.status).toBe(200);
    const body = await signin.json<{ user_id: string; email: string; csrf_token: string }>();
    expect(body).toEqual({ user_id: expect.stringMatching(/^usr_/), email, csrf_token: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(client.lastSetCookie).toMatch(/^ffedge_session=[A-Za-z0-9_-]{43}; Max-Age=1209600; Path=\/console; HttpOnly; SameSite=Strict$/);
  });

  it("uses a verification token once: followed again it says the address is already verified and sets nothing", async () => {
    const email = newEmail();
    const client = new ConsoleClient();
    await client.signUp(email);
    const token = new URL(await waitForLink(email, "verify")).searchParams.get("token");
    const first = await client.fetch("/console/api/auth/verify", { json: { token } });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ verified: true });
    await env.DB.prepare("UPDATE users SET password_hash = 'changed since' WHERE email = ?").bind(email).run();
    const again = await client.fetch("/console/api/auth/verify", { json: { token } });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ verified: true, already_verified: true });
    expect((await env.DB.prepare("SELECT password_hash FROM users WHERE email = ?").bind(email).first<{ password_hash: string }>())!.password_hash).toBe("changed since");
    await expectProblem(await client.fetch("/console/api/auth/verify", { json: { token: "made-up" } }), 400, "INVALID_TOKEN");
  });

  it("forgets a used verification token when its link expires", async () => {
    const email = newEmail();
    const client = new ConsoleClient();
    await client.signUp(email);
    const token = new URL(await waitForLink(email, "verify")).searchParams.get("token");
    expect((await client.fetch("/console/api/auth/verify", { json: { token } })).status).toBe(200);
    await env.DB.prepare("UPDATE mail_tokens SET expires_at = ? WHERE user_id = (SELECT id FROM users WHERE email = ?)").bind(new Date(Date.now() - 1000).toISOString(), email).run();
    await expectProblem(await client.fetch("/console/api/auth/verify", { json: { token } }), 400, "INVALID_TOKEN");
  });

  it("tells whether a reset link still works without using it up", async () => {
    const { email } = await signedInUser();
    const client = new ConsoleClient();
    expect((await client.fetch("/console/api/auth/forgot", { json: { email } })).status).toBe(202);
    const token = new URL(await waitForLink(email, "reset")).searchParams.get("token");
    expect((await client.fetch("/console/api/auth/reset/check", { json: { token } })).status).toBe(204);
    expect((await client.fetch("/console/api/auth/reset/check", { json: { token } })).status).toBe(204);
    expect((await client.fetch("/console/api/auth/reset", { json: { token, password: "a brand new password" } })).status).toBe(200);
    await expectProblem(await client.fetch("/console/api/auth/reset/check", { json: { token } }), 400, "INVALID_TOKEN");
    await expectProblem(await client.fetch("/console/api/auth/reset/check", { json: { token: "made-up" } }), 400, "INVALID_TOKEN");
    await expectProblem(await client.fetch("/console/api/auth/reset/check", { json: {} }), 400, "VALIDATION_FAILED");
  });

  it("answers a sign-up for a registered address exactly like a new one, and changes nothing", async () => {
    const { email } = await signedInUser();
    const again = await new ConsoleClient().signUp(email, "another password 123");
    expect(again.status).toBe(202);
    expect(await again.json()).toEqual({ message: "If the address can be registered, a verification link is on its way." });
    const [notice] = await waitForMail(email, (m) => m.subject === "You already have an ffedge account");
    expect(notice!.links.some((link) => link.includes("token="))).toBe(false);
    expect((await new ConsoleClient().signIn(email)).status).toBe(200);
    await expectProblem(await new ConsoleClient().signIn(email, "another password 123"), 401, "INVALID_CREDENTIALS");
  });

  it("applies only the first sign-up's password, through its own link, when an unverified address signs up twice (issue 18 #2)", async () => {
    const email = newEmail();
    const owner = new ConsoleClient();
    await owner.signUp(email, "owner password 1");
    const [first] = await waitForMail(email, (m) => m.subject === "Confirm your ffedge account");
    await new ConsoleClient().signUp(email, "someone else's 2");
    await waitForMail(email, (m) => m.subject === "You already have an ffedge account");
    expect((await outbox(email)).filter((m) => m.subject === "Confirm your ffedge account")).toHaveLength(1);
    await expectProblem(await new ConsoleClient().signIn(email, "someone else's 2"), 401, "INVALID_CREDENTIALS");
    const token = new URL(first!.links[0]!).searchParams.get("token");
    expect((await owner.fetch("/console/api/auth/verify", { json: { token } })).status).toBe(200);
    expect((await new ConsoleClient().signIn(email, "owner password 1")).status).toBe(200);
    await expectProblem(await new ConsoleClient().signIn(email, "someone else's 2"), 401, "INVALID_CREDENTIALS");
  });

  it.each([
    [{ email: "not-an-address", password: PASSWORD }],
    [{ email: newEmail(), password: "short" }],
    [{ email: newEmail() }],
  ])("refuses %j with 400 VALIDATION_FAILED", async (body) => {
    await expectProblem(await new ConsoleClient().fetch("/console/api/auth/signup", { json: body }), 400, "VALIDATION_FAILED");
  });
});

describe("sign-in", () => {
  it("answers a wrong password and an unknown address with the same 401", async () => {
    const { email } = await signedInUser();
    const wrong = await expectProblem(await new ConsoleClient().signIn(email, "wrong password!"), 401, "INVALID_CREDENTIALS");
    const unknown = await expectProblem(await new ConsoleClient().signIn(newEmail()), 401, "INVALID_CREDENTIALS");
    expect(wrong).toEqual(unknown);
  });

  it("starts a new session at every sign-in and ends the one the browser had", async () => {
    const { client, email } = await signedInUser();
    const before = client.cookie;
    expect((await client.signIn(email)).status).toBe(200);
    expect(client.cookie).not.toBe(before);
    expect((await client.fetch("/console/api/session")).status).toBe(200);
    const stale = new ConsoleClient();
    stale.cookie = before;
    await expectProblem(await stale.fetch("/console/api/session"), 401, "UNAUTHORIZED");
  });

  it("gives the session's user, address and CSRF token; 401 without a session", async () => {
    const { client, email, userId } = await signedInUser();
    const session = await client.fetch("/console/api/session");
    expect(await session.json()).toEqual({ user_id: userId, email, csrf_token: client.csrfToken });
    await expectProblem(await new ConsoleClient().fetch("/console/api/session"), 401, "UNAUTHORIZED");
  });

  it("stops one client trying passwords for an account after too many failures, even the right one (429 + Retry-After)", async () => {
    const { email } = await signedInUser();
    const guesser = new ConsoleClient();
    for (let i = 0; i < ACCOUNT_FAILURE_LIMIT; i++) await expectProblem(await guesser.signIn(email, `wrong password ${i}`), 401, "INVALID_CREDENTIALS");
    const blocked = await guesser.signIn(email);
    await expectProblem(blocked, 429, "TOO_MANY_ATTEMPTS");
    const retryAfter = Number(blocked.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
  });

  it("does not lock the owner out for a stranger's failed sign-ins and reset requests (issue 18 #4)", async () => {
    const { email } = await signedInUser();
    const stranger = new ConsoleClient();
    for (let i = 0; i < ACCOUNT_FAILURE_LIMIT; i++) await expectProblem(await stranger.signIn(email, `wrong password ${i}`), 401, "INVALID_CREDENTIALS");
    for (let i = 0; i < MAIL_PAIR_LIMIT; i++) expect((await stranger.fetch("/console/api/auth/forgot", { json: { email } })).status).toBe(202);
    await expectProblem(await stranger.signIn(email), 429, "TOO_MANY_ATTEMPTS");
    await expectProblem(await stranger.fetch("/console/api/auth/forgot", { json: { email } }), 429, "TOO_MANY_ATTEMPTS");
    const owner = new ConsoleClient();
    expect((await owner.signIn(email)).status).toBe(200);
    const before = (await outbox(email)).length;
    expect((await owner.fetch("/console/api/auth/forgot", { json: { email } })).status).toBe(202);
    await waitForMail(email, (m) => m.subject === "Reset your ffedge password", MAIL_PAIR_LIMIT + 1);
    expect((await outbox(email)).length).toBe(before + 1);
  });

  it("stops guessing spread over many client addresses, and a completed reset lifts that lock (issue 18 #4)", async () => {
    const { email } = await signedInUser();
    for (let i = 0; i < ACCOUNT_WIDE_FAILURE_LIMIT; i++) await recordSigninFailure(env.DB, signinSubjects(email, `203.0.113.${i % 250}-${i}`));
    const owner = new ConsoleClient();
    await expectProblem(await owner.signIn(email), 429, "TOO_MANY_ATTEMPTS");
    expect((await owner.fetch("/console/api/auth/forgot", { json: { email } })).status).toBe(202);
    expect((await owner.follow(email, "reset", { password: "after the lockout" })).status).toBe(200);
    expect((await owner.signIn(email, "after the lockout")).status).toBe(200);
  });

  it("stops one client address that guesses across many accounts", async () => {
    const guesser = new ConsoleClient();
    for (let i = 0; i < ADDRESS_FAILURE_LIMIT; i++) await expectProblem(await guesser.signIn(newEmail(), "guess guess guess"), 401, "INVALID_CREDENTIALS");
    const { email } = await signedInUser();
    await expectProblem(await guesser.signIn(email), 429, "TOO_MANY_ATTEMPTS");
    expect((await new ConsoleClient().signIn(email)).status).toBe(200);
  });
});

describe("sign-out", () => {
  it("revokes the session and clears the cookie", async () => {
    const { client } = await signedInUser();
    const cookie = client.cookie;
    const response = await client.fetch("/console/api/auth/signout", { method: "POST" });
    expect(response.status).toBe(204);
    expect(client.lastSetCookie).toMatch(/^ffedge_session=; Max-Age=0; Path=\/console/);
    const replay = new ConsoleClient();
    replay.cookie = cookie;
    await expectProblem(await replay.fetch("/console/api/session"), 401, "UNAUTHORIZED");
  });
});

describe("password reset", () => {
  it("answers every address the same and mails a link only to an existing account; an address without one is told so", async () => {
    const { email } = await signedInUser();
    const unknown = newEmail();
    const answers = await Promise.all([email, unknown].map((address) => new ConsoleClient().fetch("/console/api/auth/forgot", { json: { email: address } })));
    expect(answers.map((answer) => answer.status)).toEqual([202, 202]);
    expect(await answers[0]!.json()).toEqual(await answers[1]!.json());
    await waitForLink(email, "reset");
    // Every address gets exactly one mail, so a failed send (503) cannot tell them apart either.
    const notices = await outbox(unknown);
    expect(notices.map((m) => m.subject)).toEqual(["No ffedge account uses this address"]);
    expect(notices[0]!.links.some((link) => link.includes("token="))).toBe(false);
    expect(notices[0]!.links).toContain(`${env.EDGE_URL.replace(/\/+$/, "")}/console/signup`);
  });

  it("sets the new password through the mailed link, ends every session and works once", async () => {
    const { client, email } = await signedInUser();
    await client.fetch("/console/api/auth/forgot", { json: { email } });
    const token = new URL(await waitForLink(email, "reset")).searchParams.get("token");
    const reset = await new ConsoleClient().fetch("/console/api/auth/reset", { json: { token, password: "a brand new password" } });
    expect(reset.status).toBe(200);
    expect(await reset.json()).toEqual({ reset: true });
    await expectProblem(await client.fetch("/console/api/session"), 401, "UNAUTHORIZED");
    await expectProblem(await new ConsoleClient().signIn(email), 401, "INVALID_CREDENTIALS");
    expect((await new ConsoleClient().signIn(email, "a brand new password")).status).toBe(200);
    await expectProblem(await new ConsoleClient().fetch("/console/api/auth/reset", { json: { token, password: "yet another password" } }), 400, "INVALID_TOKEN");
  });

  it("lets a user created by the key CLI with an email set a password and sign in", async () => {
    const { userId } = await createUser();
    const email = newEmail();
    await env.DB.prepare("UPDATE users SET email = ? WHERE id = ?").bind(email, userId).run();
    await expectProblem(await new ConsoleClient().signIn(email, ""), 401, "INVALID_CREDENTIALS");
    const client = new ConsoleClient();
    await client.fetch("/console/api/auth/forgot", { json: { email } });
    expect((await client.follow(email, "reset", { password: "cli user password" })).status).toBe(200);
    const signin = await client.signIn(email, "cli user password");
    expect(signin.status).toBe(200);
    expect((await signin.json<{ user_id: string }>()).user_id).toBe(userId);
  });
});

describe("CSRF", () => {
  it("refuses a state-changing request without our Origin, before anything else", async () => {
    const client = new ConsoleClient();
    await expectProblem(await client.fetch("/console/api/auth/signin", { json: { email: newEmail(), password: PASSWORD }, origin: null }), 403, "CSRF_FAILED");
    await expectProblem(await client.fetch("/console/api/auth/signup", { json: { email: newEmail(), password: PASSWORD }, origin: "https://evil.example" }), 403, "CSRF_FAILED");
  });

  it("refuses a signed-in state change without the session's x-csrf-token", async () => {
    const { client } = await signedInUser();
    await expectProblem(await client.fetch("/console/api/auth/signout", { method: "POST", csrf: false }), 403, "CSRF_FAILED");
    await expectProblem(await client.fetch("/console/api/auth/signout", { method: "POST", csrf: "0".repeat(64) }), 403, "CSRF_FAILED");
    expect((await client.fetch("/console/api/session")).status).toBe(200);
  });

  it("answers 401, not 403, to a state change without a session", async () => {
    await expectProblem(await new ConsoleClient().fetch("/console/api/auth/signout", { method: "POST" }), 401, "UNAUTHORIZED");
  });
});

describe("links in mail (issue 18 #1)", () => {
  const forged = (path: string, json: unknown) =>
    SELF.fetch(`http://attacker.example${path}`, {
      method: "POST",
      headers: { origin: "http://attacker.example", "content-type": "application/json", "cf-connecting-ip": `198.51.100.${Math.floor(Math.random() * 250)}` },
      body: JSON.stringify(json),
    });
  const consoleUrl = () => env.EDGE_URL.replace(/\/+$/, "");

  it("builds the reset link from EDGE_URL, never from a forged Host", async () => {
    const { email } = await signedInUser();
    expect((await forged("/console/api/auth/forgot", { email })).status).toBe(202);
    const link = await waitForLink(email, "reset");
    expect(link.startsWith(`${consoleUrl()}/console/reset?token=`)).toBe(true);
    expect(link).not.toContain("attacker.example");
  });

  it("builds the verification link and the already-registered notice from EDGE_URL, never from a forged Host", async () => {
    const fresh = newEmail();
    expect((await forged("/console/api/auth/signup", { email: fresh, password: PASSWORD })).status).toBe(202);
    expect((await waitForLink(fresh, "verify")).startsWith(`${consoleUrl()}/console/verify?token=`)).toBe(true);
    const { email } = await signedInUser();
    expect((await forged("/console/api/auth/signup", { email, password: PASSWORD })).status).toBe(202);
    const [notice] = await waitForMail(email, (m) => m.subject === "You already have an ffedge account");
    expect(notice!.links.length).toBeGreaterThan(0);
    for (const link of notice!.links) expect(link.startsWith(`${consoleUrl()}/console/`)).toBe(true);
  });
});

describe("sign-up for an address that already has a user (issue 18 #2)", () => {
  it("never attaches the requester's password to a user the key CLI created; the owner is told to use a reset", async () => {
    const { userId } = await createUser();
    const email = newEmail();
    await env.DB.prepare("UPDATE users SET email = ? WHERE id = ?").bind(email, userId).run();
    expect((await new ConsoleClient().signUp(email, "attacker password")).status).toBe(202);
    const [notice] = await waitForMail(email, (m) => m.subject === "You already have an ffedge account");
    expect(notice!.links.some((link) => link.includes("token="))).toBe(false);
    expect(notice!.text).toContain("/console/forgot");
    await expectProblem(await new ConsoleClient().signIn(email, "attacker password"), 401, "INVALID_CREDENTIALS");
    const row = await env.DB.prepare("SELECT pending_password_hash FROM users WHERE id = ?").bind(userId).first<{ pending_password_hash: string | null }>();
    expect(row!.pending_password_hash).toBeNull();
  });

  it("sets no password through a verification link once the account has one", async () => {
    const email = newEmail();
    await new ConsoleClient().signUp(email, "pending password");
    const link = await waitForLink(email, "verify");
    // The account got its password another way meanwhile (a reset): an older sign-up's must not replace it.
    await env.DB.prepare("UPDATE users SET password_hash = ?, email_verified_at = ? WHERE email = ?").bind(await hashPassword("owner password"), new Date().toISOString(), email).run();
    const answer = await new ConsoleClient().fetch("/console/api/auth/verify", { json: { token: new URL(link).searchParams.get("token") } });
    expect(await answer.json()).toEqual({ verified: true, already_verified: true });
    await expectProblem(await new ConsoleClient().signIn(email, "pending password"), 401, "INVALID_CREDENTIALS");
    expect((await new ConsoleClient().signIn(email, "owner password")).status).toBe(200);
  });
});
