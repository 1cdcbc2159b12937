import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { readOutbox } from "../../../edge/accounts/mail";
import { signIn } from "../../../edge/accounts/signin";
import { signUp, verifyAddress } from "../../../edge/accounts/signup";
import { createUser, findUser, findUserByEmail, markEmailVerified, setPassword } from "../../../edge/accounts/users";
import { newEmail } from "../console-api/client";

async function verifyTokenMailedTo(email: string): Promise<string> {
  const [mail] = await readOutbox(env.DB, email);
  expect(mail!.subject).toBe("Confirm your ffedge account");
  return new URL(mail!.links[0]!).searchParams.get("token")!;
}

const attempt = (email: string, password: string) => ({ email, password, clientAddress: `signup-test-${crypto.randomUUID()}`, previousSession: null });

describe("signUp and verifyAddress, without HTTP", () => {
  it("keep the chosen password on the new user until the link is followed, then make it the password", async () => {
    const email = newEmail();
    await signUp(env, email, "chosen password");
    const pending = (await findUserByEmail(env.DB, email))!;
    expect(pending).toMatchObject({ password_hash: null, email_verified_at: null });
    expect(pending.pending_password_hash).toMatch(/^scrypt\$/);

    const token = await verifyTokenMailedTo(email);
    expect(await verifyAddress(env.DB, token)).toEqual({ verified: true });
    const verified = (await findUser(env.DB, pending.id))!;
    expect(verified.password_hash).toBe(pending.pending_password_hash);
    expect(verified.pending_password_hash).toBeNull();
    expect(verified.email_verified_at).not.toBeNull();
    expect(await verifyAddress(env.DB, token)).toEqual({ verified: true, already_verified: true });
    expect((await signIn(env.DB, attempt(email, "chosen password"))).id).toBe(pending.id);
  });

  it("answer a right pending password EMAIL_NOT_VERIFIED only while the link works", async () => {
    const email = newEmail();
    await signUp(env, email, "chosen password");
    await expect(signIn(env.DB, attempt(email, "chosen password"))).rejects.toMatchObject({ code: "EMAIL_NOT_VERIFIED" });
    await expect(signIn(env.DB, attempt(email, "another password"))).rejects.toMatchObject({ code: "INVALID_CREDENTIALS" });
    const user = (await findUserByEmail(env.DB, email))!;
    await env.DB.prepare("UPDATE mail_tokens SET expires_at = ? WHERE user_id = ?").bind(new Date(Date.now() - 1000).toISOString(), user.id).run();
    await expect(signIn(env.DB, attempt(email, "chosen password"))).rejects.toMatchObject({ code: "INVALID_CREDENTIALS" });
    await expect(verifyAddress(env.DB, await verifyTokenMailedTo(email))).rejects.toMatchObject({ code: "INVALID_TOKEN" });
  });
});

describe("setPassword and markEmailVerified", () => {
  it("each do only what their name says", async () => {
    const { user } = await createUser(env.DB, newEmail(), new Date(), { pendingPasswordHash: "scrypt$pending" });
    await setPassword(env.DB, user.id, "scrypt$new").run();
    expect(await findUser(env.DB, user.id)).toMatchObject({ password_hash: "scrypt$new", pending_password_hash: null, email_verified_at: null });
    const when = new Date("2026-01-02T03:04:05.000Z");
    await markEmailVerified(env.DB, user.id, when).run();
    await markEmailVerified(env.DB, user.id, new Date()).run();
    expect(await findUser(env.DB, user.id)).toMatchObject({ password_hash: "scrypt$new", email_verified_at: when.toISOString() });
  });
});
