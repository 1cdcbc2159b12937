/**
 * API keys: `ffe_` + 32 random bytes (base64url). Only the SHA-256 hex digest and a short
 * display prefix are ever stored. Web Crypto only, so the edge and the Node CLI share it.
 */
export const KEY_PREFIX = "ffe_";
const DISPLAY_PREFIX_LENGTH = KEY_PREFIX.length + 8;
const KEY_PATTERN = /^ffe_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): { key: string; prefix: string } {
  const key = KEY_PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { key, prefix: displayPrefix(key) };
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}

export function isWellFormedApiKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}

export async function hashApiKey(key: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
}

/** A random identifier of `bytes` bytes, lowercase hex. */
export function randomHex(bytes: number): string {
  return toHex(crypto.getRandomValues(new Uint8Array(bytes)));
}

export function toHex(buffer: ArrayBuffer | Uint8Array): string {
  const bytes = buffer instanceof Uint8Array ? buffer : new Uint8Array(buffer);
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}

export function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}
