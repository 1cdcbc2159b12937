import { Webhook } from "standardwebhooks";

export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/**
 * The Standard Webhooks headers for one attempt: `v1,<base64 HMAC-SHA256 of id.timestamp.body>`
 * once per secret, space-separated, so a receiver holding either side of a rotation verifies.
 * https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 */
export function signedHeaders(secrets: readonly string[], webhookId: string, body: string, at: Date): SignedHeaders {
  if (secrets.length === 0) throw new Error("A webhook needs at least one signing secret.");
  return {
    "webhook-id": webhookId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": secrets.map((secret) => new Webhook(secret).sign(webhookId, at, body)).join(" "),
  };
}
