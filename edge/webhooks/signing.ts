import { Webhook } from "standardwebhooks";
import { randomHex } from "../../shared/encoding";
import { open, seal } from "../lib/sealed-box";

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

const PREFIX = "whsec_";
/** The Standard Webhooks spec asks for secrets of 24 to 64 random bytes. */
const SECRET_BYTES = 32;
/** How long a secret stays valid after a rotation replaced it. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000;

interface SecretRow {
  id: string;
  ciphertext: string;
  created_at: string;
  expires_at: string | null;
}

/**
 * The secrets that sign a user's deliveries right now, newest first: the current one and any
 * replaced by a rotation less than 24 h ago. The first delivery creates the current one.
 */
export async function signingSecrets(env: Env, userId: string, now = new Date()): Promise<string[]> {
  let rows = await validRows(env.DB, userId, now);
  if (!rows.some((row) => row.expires_at === null)) {
    // The partial unique index keeps one current secret per user if two deliveries race here.
    await insertFirstSecret(env, userId, now);
    rows = await validRows(env.DB, userId, now);
  }
  return Promise.all(rows.map((row) => decrypt(env, userId, row)));
}

/**
 * Replaces the current secret (creating the first one if there is none) and returns the new
 * one: the only time a secret is ever shown. The replaced one keeps signing for 24 h.
 */
export async function rotateSecret(env: Env, userId: string, now = new Date()): Promise<{ secret: string; created_at: string; previous_valid_until: string | null }> {
  const nowIso = now.toISOString();
  const retiredUntil = new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString();
  const id = `whs_${randomHex(12)}`;
  const secret = newSecret();
  const ciphertext = await encrypt(env, userId, id, secret);
  await env.DB.batch([
    env.DB.prepare("DELETE FROM webhook_secrets WHERE user_id = ? AND expires_at <= ?").bind(userId, nowIso),
    env.DB.prepare("UPDATE webhook_secrets SET expires_at = ? WHERE user_id = ? AND expires_at IS NULL").bind(retiredUntil, userId),
    env.DB.prepare("INSERT INTO webhook_secrets (id, user_id, ciphertext, created_at) VALUES (?, ?, ?, ?)").bind(id, userId, ciphertext, nowIso),
  ]);
  const previous = await env.DB.prepare("SELECT MAX(expires_at) AS until FROM webhook_secrets WHERE user_id = ? AND expires_at > ?")
    .bind(userId, nowIso)
    .first<{ until: string | null }>();
  return { secret, created_at: nowIso, previous_valid_until: previous?.until ?? null };
}

async function validRows(db: D1Database, userId: string, now: Date): Promise<SecretRow[]> {
  const { results } = await db
    .prepare("SELECT id, ciphertext, created_at, expires_at FROM webhook_secrets WHERE user_id = ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY expires_at IS NULL DESC, created_at DESC")
    .bind(userId, now.toISOString())
    .all<SecretRow>();
  return results;
}

async function insertFirstSecret(env: Env, userId: string, now: Date): Promise<void> {
  const id = `whs_${randomHex(12)}`;
  const ciphertext = await encrypt(env, userId, id, newSecret());
  await env.DB.prepare("INSERT OR IGNORE INTO webhook_secrets (id, user_id, ciphertext, created_at) VALUES (?, ?, ?, ?)").bind(id, userId, ciphertext, now.toISOString()).run();
}

/** A fresh Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function newSecret(): string {
  return PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(SECRET_BYTES)));
}

/**
 * Secrets are sealed at rest (edge/lib/sealed-box.ts) so that a D1 export or backup does not let
 * anyone forge our deliveries. The key is derived from SIGNING_SECRET under this label, so
 * rotating SIGNING_SECRET invalidates stored webhook secrets: users then rotate theirs. The owner
 * (a user or an endpoint id) and the row id are bound in as `owner\nid`, so a sealed secret
 * cannot be moved to another owner or row. Label and binding are those secrets were first sealed
 * with: changing either would make every stored secret unreadable.
 */
const SEALED_BOX_LABEL = "ffedge webhook secrets v1";

/** Seals a secret for its row: `owner` (a user or an endpoint id) and the row id are bound in. */
export function encrypt(env: Env, owner: string, id: string, secret: string): Promise<string> {
  return seal(env.SIGNING_SECRET, SEALED_BOX_LABEL, `${owner}\n${id}`, secret);
}

/** Opens what `encrypt` sealed for the same owner and row. */
export function decrypt(env: Env, owner: string, row: Pick<SecretRow, "id" | "ciphertext">): Promise<string> {
  return open(env.SIGNING_SECRET, SEALED_BOX_LABEL, `${owner}\n${row.id}`, row.ciphertext);
}

function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Every signing secret of the user (erasing the account); a statement, for batches. */
export function deleteUserSecretsStatement(db: D1Database, userId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM webhook_secrets WHERE user_id = ?").bind(userId);
}
