import { createMiddleware } from "hono/factory";
import { AppError } from "../../../shared/errors";
import { readSession } from "../../accounts/sessions";
import { constantTimeEqual } from "../../lib/auth";
import type { AppEnv } from "../../lib/openapi";
import { enforceRateLimit } from "../../lib/rate-limit";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * The console session (cookie) and, on state-changing methods, its CSRF token in `x-csrf-token`.
 * The Origin check comes before it, in `requireSameOrigin`.
 */
export const requireSession = createMiddleware<AppEnv>(async (c, next) => {
  const session = await readSession(c);
  if (!session) throw new AppError("UNAUTHORIZED", "Sign in first: this needs a console session.");
  if (!SAFE_METHODS.has(c.req.method)) {
    const sent = c.req.header("x-csrf-token") ?? "";
    if (!constantTimeEqual(sent, session.csrfToken)) throw new AppError("CSRF_FAILED", "The x-csrf-token header is missing or does not match the session (GET /console/api/session gives it).");
  }
  c.set("userId", session.userId);
  c.set("session", session);
  for (const [name, value] of Object.entries(await enforceRateLimit(c.env, `user:${session.userId}`))) c.header(name, value);
  await next();
});

/**
 * Every state-changing console request must come from a page of our own origin. hono/csrf only
 * checks form-like content types (a cross-site form cannot send JSON), but the console also takes
 * DELETE and multipart uploads and a cookie session must not depend on the body's type, so the
 * Origin header is required and compared on every unsafe method.
 */
export const requireSameOrigin = createMiddleware<AppEnv>(async (c, next) => {
  if (!SAFE_METHODS.has(c.req.method) && c.req.header("origin") !== new URL(c.req.url).origin) {
    throw new AppError("CSRF_FAILED", "State-changing console requests must come from the console's own origin (Origin header).");
  }
  await next();
});
