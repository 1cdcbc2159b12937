import { base64url } from "../../shared/encoding";
import { AppError } from "../../shared/errors";

/**
 * Compact HMAC-SHA256 tokens (`<base64url payload>.<base64url signature>`) for URLs the
 * edge hands out: signed uploads, transcoder output uploads and task callbacks. Each token
 * names its purpose so one kind can never be replayed as another.
 */
export async function signToken(secret: string, purpose: string, payload: Record<string, unknown>, ttlSeconds: number): Promise<string> {
  const body = base64url(new TextEncoder().encode(JSON.stringify({ ...payload, p: purpose, exp: Math.floor(Date.now() / 1000) + ttlSeconds })));
  return `${body}.${base64url(new Uint8Array(await hmac(secret, body)))}`;
}

export async function verifyToken<T extends Record<string, unknown>>(secret: string, purpose: string, token: string): Promise<T> {
  const [body, signature] = token.split(".");
  if (!body || !signature) throw invalid();
  const key = await hmacKey(secret);
  let payload: T & { p: string; exp: number };
  try {
    if (!(await crypto.subtle.verify("HMAC", key, fromBase64url(signature), new TextEncoder().encode(body)))) throw invalid();
    payload = JSON.parse(new TextDecoder().decode(fromBase64url(body)));
  } catch {
    throw invalid();
  }
  if (payload.p !== purpose) throw invalid();
  if (payload.exp < Date.now() / 1000) throw new AppError("SIGNATURE_EXPIRED", "This signed URL has expired; request a new one.");
  return payload;
}

function invalid(): AppError {
  return new AppError("SIGNATURE_INVALID", "The signature of this URL is not valid.");
}

async function hmacKey(secret: string): Promise<CryptoKey> {
  if (!secret) throw new AppError("INTERNAL", "SIGNING_SECRET is not configured.");
  return crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

async function hmac(secret: string, data: string): Promise<ArrayBuffer> {
  return crypto.subtle.sign("HMAC", await hmacKey(secret), new TextEncoder().encode(data));
}

function fromBase64url(text: string): Uint8Array {
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/") + "===".slice((text.length + 3) % 4));
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}
