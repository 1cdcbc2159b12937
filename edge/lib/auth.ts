import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { hashApiKey, isWellFormedApiKey } from "../../shared/api-keys";
import { bearerToken } from "../../shared/bearer";
import { AppError } from "../../shared/errors";
import { config } from "./config";
import { enforceRateLimit } from "./rate-limit";

/** A signed-in console session as a request carries it; edge/accounts/sessions.ts starts, reads and ends them. */
export interface Session {
  hash: string;
  userId: string;
  email: string | null;
  csrfToken: string;
}

export type AuthVariables = {
  userId: string;
  /** Set on console requests: the signed-in session. */
  session?: Session;
  /** Set on GET /v1/tasks/{task_id} without a key while PUBLIC_TASK_STATUS allows it. */
  anonymousTaskRead?: boolean;
  /** The SHA-256 of the API key that authenticated the request. */
  apiKeyHash?: string;
};
type AuthEnv = { Bindings: Env; Variables: AuthVariables };

// One body for missing, malformed, unknown and revoked keys: a caller learns nothing from the difference.
export const unauthorized = () =>
  new AppError("UNAUTHORIZED", "A valid API key is required: send it as 'Authorization: Bearer <key>'.");

/** last_used_at is written at most this often per key, so the hot path stays one D1 read. */
const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Requests the console forwards to the public API (`/console/api/v1/...` → `/v1/...`), each
 * mapped to the user of the session that `requireSession` already checked. Keyed by the Request
 * object itself: nothing a client sends can put a request in here.
 */
const sessionRequests = new WeakMap<Request, string>();

/** Marks a request built by the console forwarder as acting for the session's user. */
export function actAsSessionUser(request: Request, userId: string): void {
  sessionRequests.set(request, userId);
}

/**
 * Authentication of the public API: a Bearer API key on `/v1` and `/api`, or — for requests
 * the console forwarded — the console session. Keys in query strings are never read.
 */
export const requireApiKey = createMiddleware<AuthEnv>(async (c, next) => {
  // Sub-apps sharing a path prefix (tasks and webhooks under /v1/tasks/*) each mount this
  // middleware: authenticate, and count against the rate limit, once per request.
  if (c.get("userId") || c.get("anonymousTaskRead")) return next();
  const sessionUser = sessionRequests.get(c.req.raw);
  if (sessionUser) {
    c.set("userId", sessionUser);
    return next();
  }
  const key = bearerToken(c.req.header("authorization"));
  if (!key || !isWellFormedApiKey(key)) throw unauthorized();
  const hash = await hashApiKey(key);
  const row = await c.env.DB.prepare("SELECT hash, user_id, last_used_at FROM api_keys WHERE hash = ? AND revoked_at IS NULL")
    .bind(hash)
    .first<{ hash: string; user_id: string; last_used_at: string | null }>();
  if (!row || !constantTimeEqual(row.hash, hash)) throw unauthorized();
  c.set("userId", row.user_id);
  c.set("apiKeyHash", hash);
  recordKeyUse(c, hash, row.last_used_at);
  for (const [name, value] of Object.entries(await enforceRateLimit(c.env, hash))) c.header(name, value);
  await next();
});

/**
 * FFHub's clients poll GET /v1/tasks/{task_id} without a key. Task ids are unguessable (96 random
 * bits) and outputs are capability URLs already, so while PUBLIC_TASK_STATUS is not "false" that
 * one read is served by id alone; a request that does send a key is authenticated as usual.
 * Anonymous reads count against a rate limit per client address.
 */
export const allowAnonymousTaskRead = createMiddleware<AuthEnv>(async (c, next) => {
  if (c.req.method === "GET" && !c.req.header("authorization") && !sessionRequests.has(c.req.raw) && config(c.env).publicTaskStatus) {
    for (const [name, value] of Object.entries(await enforceRateLimit(c.env, `address:${clientAddress(c)}`))) c.header(name, value);
    c.set("anonymousTaskRead", true);
  }
  await next();
});

/** The caller's address as Cloudflare saw it; locally every request comes from the same place. */
export function clientAddress(c: Context): string {
  return c.req.header("cf-connecting-ip") ?? "local";
}

function recordKeyUse(c: Context<AuthEnv>, hash: string, lastUsedAt: string | null): void {
  const now = new Date();
  if (lastUsedAt && now.getTime() - Date.parse(lastUsedAt) < LAST_USED_RESOLUTION_MS) return;
  const write = c.env.DB.prepare("UPDATE api_keys SET last_used_at = ? WHERE hash = ?").bind(now.toISOString(), hash).run();
  c.executionCtx.waitUntil(write.catch((error) => console.error(JSON.stringify({ msg: "last_used_at not recorded", error: String(error) }))));
}

export function constantTimeEqual(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  return left.byteLength === right.byteLength && crypto.subtle.timingSafeEqual(left, right);
}

/** How often a long-lived answer (an event stream) checks that its API key still stands. */
export const KEY_RECHECK_MS = 5_000;

/**
 * Which of these API key hashes are still valid (not revoked, not deleted), in one D1 read. If
 * D1 cannot answer, every key counts as valid: a stream is cut for a revocation, never for an outage.
 */
export async function liveKeyHashes(db: D1Database, hashes: readonly string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  return db
    .prepare(`SELECT hash FROM api_keys WHERE revoked_at IS NULL AND hash IN (${hashes.map(() => "?").join(",")})`)
    .bind(...hashes)
    .all<{ hash: string }>()
    .then((result) => new Set(result.results.map((row) => row.hash)))
    .catch(() => new Set(hashes));
}

/**
 * A stream that ends as soon as the API key behind the request is revoked: a watcher keeps
 * its stream open for the whole task, and revoking a key must cut off everything it opened.
 */
export function untilKeyRevoked(c: Context<AuthEnv>, body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const hash = c.get("apiKeyHash");
  if (!hash) return body;
  const reader = body.getReader();
  let timer: ReturnType<typeof setInterval> | undefined;
  const stop = () => clearInterval(timer);
  return new ReadableStream<Uint8Array>({
    start(controller) {
      timer = setInterval(async () => {
        if ((await liveKeyHashes(c.env.DB, [hash])).has(hash)) return;
        stop();
        await reader.cancel().catch(() => {});
        try {
          controller.close();
        } catch {
          // Already closed by the task's end.
        }
      }, KEY_RECHECK_MS);
    },
    async pull(controller) {
      const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (done) {
        stop();
        try {
          controller.close();
        } catch {
          // Closed by a revocation while this read waited.
        }
        return;
      }
      controller.enqueue(value);
    },
    async cancel(reason) {
      stop();
      await reader.cancel(reason);
    },
  });
}
