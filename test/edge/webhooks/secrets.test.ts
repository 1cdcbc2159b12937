import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ROTATION_OVERLAP_MS, rotateSecret, signingSecrets } from "../../../edge/webhooks/secrets";
import { createUser } from "../helpers";

const HOUR = 60 * 60 * 1000;

describe("webhook secrets", () => {
  it("creates a whsec_ secret on first need and keeps signing with it", async () => {
    const { userId } = await createUser();
    const first = await signingSecrets(env, userId);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await signingSecrets(env, userId)).toEqual(first);
  });

  it("keeps one current secret when two deliveries create it at once", async () => {
    const { userId } = await createUser();
    const [a, b] = await Promise.all([signingSecrets(env, userId), signingSecrets(env, userId)]);
    expect(a).toEqual(b);
    const { results } = await env.DB.prepare("SELECT id FROM webhook_secrets WHERE user_id = ?").bind(userId).all();
    expect(results).toHaveLength(1);
  });

  it("stores secrets encrypted, never as written", async () => {
    const { userId } = await createUser();
    const { secret } = await rotateSecret(env, userId);
    const row = await env.DB.prepare("SELECT ciphertext FROM webhook_secrets WHERE user_id = ?").bind(userId).first<{ ciphertext: string }>();
    expect(row!.ciphertext).not.toContain(secret.slice(6));
    expect(atob(row!.ciphertext)).not.toContain(secret.slice(6));
  });

  it("creates the first secret on the first rotation, with nothing to overlap", async () => {
    const { userId } = await createUser();
    const rotated = await rotateSecret(env, userId);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.previous_valid_until).toBeNull();
    expect(await signingSecrets(env, userId)).toEqual([rotated.secret]);
  });

  it("signs with the new and the old secret for 24 h after a rotation, then with the new one only", async () => {
    const { userId } = await createUser();
    const now = new Date();
    const [old] = await signingSecrets(env, userId, now);
    const rotated = await rotateSecret(env, userId, now);
    expect(rotated.secret).not.toBe(old);
    expect(rotated.previous_valid_until).toBe(new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString());

    expect(await signingSecrets(env, userId, now)).toEqual([rotated.secret, old]);
    expect(await signingSecrets(env, userId, new Date(now.getTime() + 23 * HOUR))).toEqual([rotated.secret, old]);
    expect(await signingSecrets(env, userId, new Date(now.getTime() + 24 * HOUR))).toEqual([rotated.secret]);
  });

  it("keeps each replaced secret for its own 24 h across repeated rotations", async () => {
    const { userId } = await createUser();
    const start = new Date();
    const first = await rotateSecret(env, userId, start);
    const second = await rotateSecret(env, userId, new Date(start.getTime() + HOUR));
    const third = await rotateSecret(env, userId, new Date(start.getTime() + 2 * HOUR));
    expect(await signingSecrets(env, userId, new Date(start.getTime() + 2 * HOUR))).toEqual([third.secret, second.secret, first.secret]);
    expect(await signingSecrets(env, userId, new Date(start.getTime() + 25.5 * HOUR))).toEqual([third.secret, second.secret]);
    expect(await signingSecrets(env, userId, new Date(start.getTime() + 26 * HOUR))).toEqual([third.secret]);
  });

  it("keeps users' secrets apart", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const [a] = await signingSecrets(env, alice.userId);
    const [b] = await signingSecrets(env, bob.userId);
    expect(a).not.toBe(b);
  });
});
