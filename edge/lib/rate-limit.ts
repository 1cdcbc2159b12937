import { AppError } from "../../shared/errors";

/**
 * Per-API-key request rate through the Workers rate-limiting binding. The binding only says
 * yes or no, so the advertised numbers come from RATE_LIMIT_REQUESTS / RATE_LIMIT_PERIOD_SECONDS,
 * which must mirror `[[ratelimits]]` in wrangler.toml (a test checks that they do).
 * Headers follow draft-ietf-httpapi-ratelimit-headers. Returns the headers for a response
 * that passed; throws RATE_LIMITED (429) otherwise.
 */
export async function enforceRateLimit(env: Env, keyHash: string): Promise<Record<string, string>> {
  const limit = Number(env.RATE_LIMIT_REQUESTS) || 1200;
  const period = Number(env.RATE_LIMIT_PERIOD_SECONDS) || 60;
  const { success } = await env.API_RATE_LIMIT.limit({ key: keyHash });
  if (success) return { "RateLimit-Policy": `${limit};w=${period}` };
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
