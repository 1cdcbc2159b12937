import { base64url } from "./encoding";

/**
 * API keys: `ffe_` + 32 random bytes (base64url). Only the key's hash (`hashToken`) and a short
 * display prefix are ever stored. Web Crypto only, so the edge and the Node scripts share it.
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
