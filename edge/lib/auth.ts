import { createMiddleware } from "hono/factory";
import { hashApiKey, isWellFormedApiKey } from "../../shared/api-keys";
import { bearerToken } from "../../shared/bearer";
import { AppError } from "../../shared/errors";
import { enforceRateLimit } from "./rate-limit";

export type AuthVariables = { userId: string };

// One body for missing, malformed, unknown and revoked keys: a caller learns nothing from the difference.
export const unauthorized = () =>
  new AppError("UNAUTHORIZED", "A valid API key is required: send it as 'Authorization: Bearer <key>'.");

/** Bearer API key authentication. Keys in query strings are never read. */
export const requireApiKey = createMiddleware<{ Bindings: Env; Variables: AuthVariables }>(async (c, next) => {
  // Sub-apps sharing a path prefix (tasks and webhooks under /v1/tasks/*) each mount this
  // middleware: authenticate, and count against the rate limit, once per request.
  if (c.get("userId")) return next();
  const key = bearerToken(c.req.header("authorization"));
  if (!key || !isWellFormedApiKey(key)) throw unauthorized();
  const hash = await hashApiKey(key);
  const row = await c.env.DB.prepare("SELECT hash, user_id FROM api_keys WHERE hash = ? AND revoked_at IS NULL")
    .bind(hash)
    .first<{ hash: string; user_id: string }>();
  if (!row || !constantTimeEqual(row.hash, hash)) throw unauthorized();
  c.set("userId", row.user_id);
  for (const [name, value] of Object.entries(await enforceRateLimit(c.env, hash))) c.header(name, value);
  await next();
});

function constantTimeEqual(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  return left.byteLength === right.byteLength && crypto.subtle.timingSafeEqual(left, right);
}
