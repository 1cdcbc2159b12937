import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { isWellFormedApiKey } from "../../shared/api-keys";
import { bearerToken } from "../../shared/bearer";
import { AppError } from "../../shared/errors";
import { hashToken } from "../../shared/token-hash";
import { type AuthVariables, type Session, clientAddress, constantTimeEqual } from "../lib/auth";
import { config } from "../lib/config";
import { log } from "../lib/log";
import { enforceRateLimit } from "../lib/rate-limit";
import { findActiveApiKey, liveApiKeysStatement, recordApiKeyUse } from "./api-keys";
import { liveSessionsStatement } from "./sessions";

/**
 * The credentials a request to the public API carries — a Bearer API key, the console session
 * of a forwarded request, an MCP caller's OAuth grant — checked once per request, and for long
 * answers (event streams, sockets) again until they end.
 */

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
const sessionRequests = new WeakMap<Request, Session>();

/** Marks a request built by the console forwarder as acting for the session's user. */
export function actAsSessionUser(request: Request, session: Session): void {
  sessionRequests.set(request, session);
}

/**
 * Requests the MCP server makes for a caller that signed in with OAuth (edge/mcp/oauth.ts), each
 * mapped to the user its access token was granted by. Keyed like `sessionRequests`, so nothing a
 * client sends can put a request in here.
 */
const oauthRequests = new WeakMap<Request, string>();

/** Marks a request the MCP server builds as acting for the user of a validated OAuth access token. */
export function actAsOAuthUser(request: Request, userId: string): void {
  oauthRequests.set(request, userId);
}

const SESSION_CREDENTIAL = "session:";

/**
 * Authentication of the public API: a Bearer API key on `/v1` and `/api`, or — for requests
 * the console forwarded — the console session. Keys in query strings are never read.
 */
export const requireApiKey = createMiddleware<AuthEnv>(async (c, next) => {
  // Sub-apps sharing a path prefix (tasks and webhooks under /v1/tasks/*) each mount this
  // middleware: authenticate, and count against the rate limit, once per request.
  if (c.get("userId") || c.get("anonymousTaskRead")) return next();
  const session = sessionRequests.get(c.req.raw);
  if (session) {
    c.set("userId", session.userId);
    c.set("credential", `${SESSION_CREDENTIAL}${session.hash}`);
    return next();
  }
  const oauthUserId = oauthRequests.get(c.req.raw);
  if (oauthUserId) {
    c.set("userId", oauthUserId);
    for (const [name, value] of Object.entries(await enforceRateLimit(c.env, `user:${oauthUserId}`))) c.header(name, value);
    return next();
  }
  const key = bearerToken(c.req.header("authorization"));
  if (!key || !isWellFormedApiKey(key)) throw unauthorized();
  const hash = await hashToken(key);
  const row = await findActiveApiKey(c.env.DB, hash);
  if (!row || !constantTimeEqual(row.hash, hash)) throw unauthorized();
  c.set("userId", row.user_id);
  c.set("apiKeyHash", hash);
  c.set("credential", hash);
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


function recordKeyUse(c: Context<AuthEnv>, hash: string, lastUsedAt: string | null): void {
  const now = new Date();
  if (lastUsedAt && now.getTime() - Date.parse(lastUsedAt) < LAST_USED_RESOLUTION_MS) return;
  const write = recordApiKeyUse(c.env.DB, hash, now);
  c.executionCtx.waitUntil(write.catch((error) => log.error("last_used_at not recorded", { error })));
}


/** How often a long-lived answer (an event stream) checks that its API key or session still stands. */
export const KEY_RECHECK_MS = 2_000;

/**
 * Which of these credentials (API key hashes, and `session:<hash>` for console sessions) still
 * stand — keys not revoked or deleted, sessions not signed out or expired — in one D1 round
 * trip. If D1 cannot answer, every one counts as live: a stream is cut for a revocation, never
 * for an outage.
 */
export async function liveCredentials(db: D1Database, credentials: readonly string[]): Promise<Set<string>> {
  if (credentials.length === 0) return new Set();
  const sessions = credentials.filter((credential) => credential.startsWith(SESSION_CREDENTIAL)).map((credential) => credential.slice(SESSION_CREDENTIAL.length));
  const keys = credentials.filter((credential) => !credential.startsWith(SESSION_CREDENTIAL));
  return db
    .batch<{ credential: string }>([liveApiKeysStatement(db, keys), liveSessionsStatement(db, SESSION_CREDENTIAL, sessions)])
    .then((results) => new Set(results.flatMap((result) => result.results.map((row) => row.credential))))
    // D1 did not answer: every credential counts as live (above).
    .catch(() => new Set(credentials));
}

/** Calls `onEnd` once the credential no longer stands (checked every KEY_RECHECK_MS); returns a stop function. */
function whenCredentialEnds(env: Env, credential: string, onEnd: () => void): () => void {
  const timer = setInterval(async () => {
    if ((await liveCredentials(env.DB, [credential])).has(credential)) return;
    clearInterval(timer);
    onEnd();
  }, KEY_RECHECK_MS);
  return () => clearInterval(timer);
}

/**
 * A stream that ends as soon as the API key or console session behind the request is revoked
 * (or signed out): a watcher keeps its stream open for the whole task, and ending a credential
 * must cut off everything it opened. The stream is closed first and the task's side let go
 * afterwards: cancelling a stream from another object can wait for its next write.
 */
export function untilCredentialEnds(c: Context<AuthEnv>, body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const credential = c.get("credential");
  if (!credential) return body;
  const reader = body.getReader();
  let stop = () => {};
  const closeQuietly = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    try {
      controller.close();
    } catch {
      // Already closed: by the task's end, or by a revocation while a read waited.
    }
  };
  return new ReadableStream<Uint8Array>({
    start(controller) {
      stop = whenCredentialEnds(c.env, credential, () => {
        closeQuietly(controller);
        // The stream ends for the revocation; a source that has ended already has nothing to cancel.
        reader.cancel().catch(() => {});
      });
    },
    async pull(controller) {
      // A source that fails ends this stream as its end would: mid-stream there is no status left to answer with.
      const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (done) {
        stop();
        return closeQuietly(controller);
      }
      try {
        controller.enqueue(value);
      } catch {
        // Closed by a revocation while this read waited.
      }
    },
    async cancel(reason) {
      stop();
      await reader.cancel(reason);
    },
  });
}

/** An application close code (4000–4999) mirroring HTTP 401: the credentials behind the socket are gone. */
const CREDENTIAL_ENDED_CLOSE = 4401;

/**
 * The task's WebSocket relayed through this request, closed (4401) as soon as the API key or
 * session behind it ends, like an SSE stream. The task object checks the keys of its sockets
 * too, but only when its alarm runs; this check does not depend on the object being awake.
 */
export function socketUntilCredentialEnds(c: Context<AuthEnv>, upstream: Response): Response {
  const credential = c.get("credential");
  const task = upstream.webSocket;
  if (!credential || upstream.status !== 101 || !task) return upstream;
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  task.accept();
  server.accept();
  const reason = credential.startsWith(SESSION_CREDENTIAL) ? "Signed out" : "API key revoked";
  const stop = whenCredentialEnds(c.env, credential, () => {
    closeSocket(server, CREDENTIAL_ENDED_CLOSE, reason);
    closeSocket(task, 1000, "watcher left");
  });
  task.addEventListener("message", (event) => sendQuietly(server, event.data));
  task.addEventListener("close", (event) => (stop(), closeSocket(server, event.code, event.reason)));
  server.addEventListener("close", (event) => (stop(), closeSocket(task, event.code, event.reason)));
  return new Response(null, { status: 101, webSocket: client });
}

function sendQuietly(socket: WebSocket, data: string | ArrayBuffer): void {
  try {
    socket.send(data);
  } catch {
    // The watcher has gone; its close event ends the relay.
  }
}

/** Codes a peer may not send (1005 no status, 1006 abnormal) become a normal close. */
function closeSocket(socket: WebSocket, code: number, reason: string): void {
  try {
    socket.close(code === 1005 || code === 1006 ? 1000 : code, reason);
  } catch {
    // Already closing.
  }
}
