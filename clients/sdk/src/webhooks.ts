import { FFedgeError } from "./errors.js";
import type { WebhookEvent } from "./types.js";

const TOLERANCE_SECONDS = 5 * 60;

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

/**
 * Checks a webhook delivery's Standard Webhooks signature with WebCrypto (any runtime) and
 * returns the task it carries. Refuses, as FFedgeError `WEBHOOK_SIGNATURE_INVALID`, a missing
 * header, a signature made with another secret or over another body, and a timestamp more than
 * five minutes from now (a replay). Pass the body exactly as received, before any JSON parsing.
 * A registered endpoint's deliveries are checked the same way with its own secret; the
 * `webhook-event` header names the event (`verifyWebhook<FileExpiredEvent>` for `file.expired`).
 * https://github.com/standard-webhooks/standard-webhooks/blob/main/spec/standard-webhooks.md
 *
 * @example
 * const task = await verifyWebhook(await request.text(), request.headers, process.env.FFEDGE_WEBHOOK_SECRET!);
 */
export async function verifyWebhook<Event = WebhookEvent>(body: string | Uint8Array, headers: HeaderSource, secret: string, now = new Date()): Promise<Event> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures) throw invalid("The webhook-id, webhook-timestamp and webhook-signature headers are all required.");
  const sentAt = Number(timestamp);
  if (!/^\d+$/.test(timestamp) || Math.abs(now.getTime() / 1000 - sentAt) > TOLERANCE_SECONDS) {
    throw invalid("The webhook-timestamp is more than five minutes from now: a replayed or delayed delivery.");
  }
  const text = typeof body === "string" ? body : new TextDecoder().decode(body);
  const key = await crypto.subtle.importKey("raw", secretBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${text}`);
  for (const candidate of signatures.split(" ")) {
    const [version, signature] = candidate.split(",", 2);
    if (version !== "v1" || !signature) continue;
    const bytes = fromBase64(signature);
    if (bytes && (await crypto.subtle.verify("HMAC", key, bytes, signed))) return JSON.parse(text) as Event;
  }
  throw invalid("No signature matches this body and secret.");
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  const bytes = fromBase64(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
  if (!bytes) throw FFedgeError.local("WEBHOOK_SECRET_INVALID", "Invalid webhook secret", "The secret is not a whsec_ base64 string.");
  return bytes;
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    const binary = atob(text);
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function invalid(detail: string): FFedgeError {
  return FFedgeError.local("WEBHOOK_SIGNATURE_INVALID", "Invalid webhook signature", detail);
}
