import { toHex } from "./encoding";

/**
 * The stored form of a bearer secret — API keys, session cookies, mail-link and OAuth tokens:
 * its SHA-256, lowercase hex. The secrets are 32 random bytes, so a plain digest (no salt, no
 * stretching) is enough and lets a lookup be one indexed equality.
 */
export async function hashToken(secret: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(secret)));
}
