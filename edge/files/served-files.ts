import { config } from "../lib/config";
import { expiryOf } from "./records";

const SERVED_PATH = /^\/(uploads|outputs)\//;

/**
 * The R2 key of one of our own files (an upload or a task's output) that `url` names on any
 * origin the CDN answers on (PUBLIC_URL, CN_PUBLIC_URL, and EDGE_URL, which the local stack
 * serves them on too); undefined for any other URL.
 */
export function servedKeyOf(env: Env, url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const settings = config(env);
  const origins = [settings.publicUrl, settings.cnPublicUrl, settings.edgeUrl].map(originOf);
  if (!origins.includes(parsed.origin) || !SERVED_PATH.test(parsed.pathname)) return undefined;
  try {
    return decodeURIComponent(parsed.pathname.slice(1));
  } catch {
    return undefined;
  }
}

/**
 * Whether the CDN still serves the file under `key` at `now`, judged as edge/routes/cdn.ts does:
 * its object exists and its expiry (the object's metadata, else its row) has not passed. R2's
 * lifecycle rule deletes an expired object only "typically within 24 hours", so the object's
 * presence alone does not say.
 */
export async function isServed(env: Env, key: string, now = new Date()): Promise<boolean> {
  const object = await env.FILES.head(key);
  if (!object) return false;
  const expiresAt = Date.parse(object.customMetadata?.expires_at ?? (await expiryOf(env.DB, key)) ?? "");
  return Number.isFinite(expiresAt) && expiresAt > now.getTime();
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
