import { AppError } from "../../shared/errors";
import { config } from "./config";
import { log } from "./log";

/**
 * Per-API-key request rate through the Workers rate-limiting binding. The binding only says
 * yes or no, so the advertised numbers come from RATE_LIMIT_REQUESTS / RATE_LIMIT_PERIOD_SECONDS,
 * which must mirror `[[ratelimits]]` in wrangler.toml (a test checks that they do).
 * Headers follow draft-ietf-httpapi-ratelimit-headers. Returns the headers for a response
 * that passed; throws RATE_LIMITED (429) otherwise. Each Cloudflare location counts on its own,
 * so the advertised limit holds per location: a key whose requests reach several locations may
 * make up to the limit in each. https://developers.cloudflare.com/workers/runtime-apis/bindings/rate-limit/
 */
export async function enforceRateLimit(env: Env, keyHash: string): Promise<Record<string, string>> {
  const { requests: limit, periodSeconds: period } = config(env).rateLimit;
  if (await allowed(env, keyHash)) return { "RateLimit-Policy": `${limit};w=${period}` };
  // Windows are fixed and aligned to the period; the next one starts at the next multiple.
  const reset = Math.max(1, period - (Math.floor(Date.now() / 1000) % period));
  throw new AppError("RATE_LIMITED", `More than ${limit} requests in ${period} s with this API key; retry in ${reset} s.`, { retry_after: reset }).withHeaders({
    "Retry-After": String(reset),
    "RateLimit-Policy": `${limit};w=${period}`,
    RateLimit: `limit=${limit}, remaining=0, reset=${reset}`,
    "RateLimit-Limit": String(limit),
    "RateLimit-Remaining": "0",
    "RateLimit-Reset": String(reset),
  });
}

/**
 * A limiter that fails lets the request through (fails open), logged. The limit shares load
 * fairly between keys; it guards no data: the key was authenticated before it, and what a
 * request may cost is bounded on its own (running tasks per user, the daily quota, upload
 * size). Failing closed would turn a fault of the limiter's own store (locally a full disk:
 * SQLITE_FULL) into an outage of every route. Cloudflare's binding is itself permissive by
 * design: https://developers.cloudflare.com/workers/runtime-apis/bindings/rate-limit/#accuracy
 */
async function allowed(env: Env, key: string): Promise<boolean> {
  try {
    return (await env.API_RATE_LIMIT.limit({ key })).success;
  } catch (error) {
    log.error("rate limiter failed; request let through", { error });
    return true;
  }
}
