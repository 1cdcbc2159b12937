import { env } from "cloudflare:test";
import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { decrypt, encrypt, rotateSecret, ROTATION_OVERLAP_MS, signedHeaders, signingSecrets } from "../../../edge/webhooks/signing";
import { createUser } from "../helpers";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OTHER = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const BODY = JSON.stringify({ type: "task.completed", timestamp: "2026-01-01T00:00:00.000Z", data: { task_id: "tsk_1" } });
const HOUR = 60 * 60 * 1000;

describe("signedHeaders", () => {
  it("produces headers the Standard Webhooks verifier accepts", () => {
    const headers = signedHeaders([SECRET], "msg_tsk_1_completed", BODY, new Date());
    expect(headers["webhook-id"]).toBe("msg_tsk_1_completed");
    expect(headers["webhook-timestamp"]).toMatch(/^\d{10}$/);
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(SECRET).verify(BODY, { ...headers })).toEqual(JSON.parse(BODY));
  });

  it("matches the specification's HMAC-SHA256 over id.timestamp.body, computed independently", async () => {
    const at = new Date("2026-01-01T00:00:00Z");
    const headers = signedHeaders([SECRET], "msg_x", BODY, at);
    const key = await crypto.subtle.importKey("raw", Uint8Array.from(atob(SECRET.slice(6)), (c) => c.charCodeAt(0)), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`msg_x.${at.getTime() / 1000}.${BODY}`)));
    expect(headers["webhook-signature"]).toBe(`v1,${btoa(String.fromCharCode(...mac))}`);
  });

  it.each([
    ["a tampered body", (h: Record<string, string>) => ({ body: BODY.replace("completed", "failed"), headers: h })],
    ["a tampered timestamp", (h: Record<string, string>) => ({ body: BODY, headers: { ...h, "webhook-timestamp": String(Number(h["webhook-timestamp"]) - 1) } })],
    ["a tampered id", (h: Record<string, string>) => ({ body: BODY, headers: { ...h, "webhook-id": "msg_other" } })],
  ])("is rejected by the verifier for %s", (_name, tamper) => {
    const { body, headers } = tamper({ ...signedHeaders([SECRET], "msg_tsk_1_completed", BODY, new Date()) });
    expect(() => new Webhook(SECRET).verify(body, headers)).toThrow(WebhookVerificationError);
  });

  it("is rejected under a different secret", () => {
    const headers = signedHeaders([SECRET], "msg_1", BODY, new Date());
    expect(() => new Webhook(OTHER).verify(BODY, { ...headers })).toThrow(WebhookVerificationError);
  });

  it("carries one space-separated signature per secret, each verifying on its own", () => {
    const headers = signedHeaders([SECRET, OTHER], "msg_1", BODY, new Date());
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(() => new Webhook(SECRET).verify(BODY, { ...headers })).not.toThrow();
    expect(() => new Webhook(OTHER).verify(BODY, { ...headers })).not.toThrow();
  });

  it("refuses to sign without a secret", () => {
    expect(() => signedHeaders([], "msg_1", BODY, new Date())).toThrow();
  });
});

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

describe("stored secrets", () => {
  // Written by the implementation before signing.ts used edge/lib/sealed-box.ts (its own AES-GCM
  // under HKDF "ffedge webhook secrets v1", bound to "owner\nrow id"): secrets sealed then must still open.
  const VECTOR = {
    signingSecret: "test-signing-secret-for-the-fixed-vector",
    owner: "whe_0123456789abcdef01234567",
    id: "wes_0123456789abcdef01234567",
    ciphertext: "KsqqsytwZs6akwaTALKqrjoBrQCEwD7OqziW2+41/tHH+tIMgxTwEcKdw+Q5u90fVJl6iMDr7EuyGyw1HYbCadoE",
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  };
  const vectorEnv = { ...env, SIGNING_SECRET: VECTOR.signingSecret } as Env;

  it("open when sealed by the earlier implementation", async () => {
    expect(await decrypt(vectorEnv, VECTOR.owner, { id: VECTOR.id, ciphertext: VECTOR.ciphertext })).toBe(VECTOR.secret);
  });

  it("do not open for another owner or row, or under another SIGNING_SECRET", async () => {
    await expect(decrypt(vectorEnv, "whe_other", { id: VECTOR.id, ciphertext: VECTOR.ciphertext })).rejects.toThrow();
    await expect(decrypt(vectorEnv, VECTOR.owner, { id: "wes_other", ciphertext: VECTOR.ciphertext })).rejects.toThrow();
    await expect(decrypt({ ...vectorEnv, SIGNING_SECRET: "another" } as Env, VECTOR.owner, { id: VECTOR.id, ciphertext: VECTOR.ciphertext })).rejects.toThrow();
  });

  it("seal afresh each time and open again", async () => {
    const [a, b] = [await encrypt(vectorEnv, VECTOR.owner, VECTOR.id, VECTOR.secret), await encrypt(vectorEnv, VECTOR.owner, VECTOR.id, VECTOR.secret)];
    expect(a).not.toBe(b);
    expect(await decrypt(vectorEnv, VECTOR.owner, { id: VECTOR.id, ciphertext: a })).toBe(VECTOR.secret);
  });
});
