import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ACCOUNT_FAILURE_LIMIT, ADDRESS_FAILURE_LIMIT } from "../../../edge/accounts/signin-limits";
import { expectProblem } from "../files/fixtures";
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
    expect(link).toMatch(/^http:\/\/localhost:8787\/console\/verify\?token=[A-Za-z0-9_-]{43}$/);

    await expectProblem(await client.signIn(email), 403, "EMAIL_NOT_VERIFIED");
    expect((await client.follow(email, "verify")).status).toBe(200);
    const signin = await client.signIn(email);
    expect(signin.status).toBe(200);
    const body = await signin.json<{ user_id: string; email: string; csrf_token: string }>();
    expect(body).toEqual({ user_id: expect.stringMatching(/^usr_/), email, csrf_token: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(client.lastSetCookie).toMatch(/^ffedge_session=[A-Za-z0-9_-]{43}; Max-Age=1209600; Path=\/console; HttpOnly; SameSite=Strict$/);
  });

  it("refuses a verification token twice", async () => {
    const email = newEmail();
    const client = new ConsoleClient();
    await client.signUp(email);
    const token = new URL(await waitForLink(email, "verify")).searchParams.get("token");
    expect((await client.fetch("/console/api/auth/verify", { json: { token } })).status).toBe(200);
    await expectProblem(await client.fetch("/console/api/auth/verify", { json: { token } }), 400, "INVALID_TOKEN");
    await expectProblem(await client.fetch("/console/api/auth/verify", { json: { token: "made-up" } }), 400, "INVALID_TOKEN");
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

  it("applies only the password whose link was followed when an unverified address signs up twice", async () => {
    const email = newEmail();
    const owner = new ConsoleClient();
    await owner.signUp(email, "owner password 1");
    const [first] = await waitForMail(email, (m) => m.subject === "Confirm your ffedge account");
    await new ConsoleClient().signUp(email, "someone else's 2");
    await waitForMail(email, (m) => m.subject === "Confirm your ffedge account", 2);
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

  it("stops trying passwords for an account after too many failures, even the right one (429 + Retry-After)", async () => {
    const { email } = await signedInUser();
    for (let i = 0; i < ACCOUNT_FAILURE_LIMIT; i++) await expectProblem(await new ConsoleClient().signIn(email, `wrong password ${i}`), 401, "INVALID_CREDENTIALS");
    const blocked = await new ConsoleClient().signIn(email);
    await expectProblem(blocked, 429, "TOO_MANY_ATTEMPTS");
    const retryAfter = Number(blocked.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
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
  it("answers every address the same and mails a link only to an existing account", async () => {
    const { email } = await signedInUser();
    const unknown = newEmail();
    const answers = await Promise.all([email, unknown].map((address) => new ConsoleClient().fetch("/console/api/auth/forgot", { json: { email: address } })));
    expect(answers.map((answer) => answer.status)).toEqual([202, 202]);
    expect(await answers[0]!.json()).toEqual(await answers[1]!.json());
    await waitForLink(email, "reset");
    expect(await outbox(unknown)).toEqual([]);
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
