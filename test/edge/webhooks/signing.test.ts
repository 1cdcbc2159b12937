import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signedHeaders } from "../../../edge/webhooks/signing";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OTHER = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";
const BODY = JSON.stringify({ type: "task.completed", timestamp: "2026-01-01T00:00:00.000Z", data: { task_id: "tsk_1" } });

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
