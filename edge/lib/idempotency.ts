import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { randomHex, toHex } from "../../shared/encoding";
import { AppError } from "../../shared/errors";
import type { AppEnv } from "./openapi";

/** How long a key remembers its first response. */
const KEY_TTL_MS = 24 * 3_600_000;
/** The first request holds the key this long unless it renews; one that died frees it within a minute. */
const LEASE_MS = 60_000;
const RENEW_EVERY_MS = 20_000;
/** How long a duplicate waits for the first request's response before answering 409. */
const DEFAULT_WAIT_MS = 10_000;
/** A streamed body's digest is ready when the handler has read it; this only bounds a handler that did not. */
const STREAMED_DIGEST_WAIT_MS = 5_000;
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);
/** Printable ASCII, as Stripe and draft-ietf-httpapi-idempotency-key-header use (a quoted sf-string is unquoted). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
/** Headers of the first response that belong to that moment, not to the response: never replayed. */
const NOT_REPLAYED = /^(content-length|date|set-cookie|ratelimit.*|retry-after|access-control-.*|vary)$/i;

export interface IdempotencyOptions {
  /**
   * What makes two requests "the same" besides method and path: by default the SHA-256 of the
   * raw body. For a `streamed` route it is only called on a retry, to compare its body.
   */
  fingerprint?: (c: Context<AppEnv>) => Promise<string>;
  /**
   * The body is too large to buffer: the handler reads it through `fingerprintWhileReading`,
   * which reports the fingerprint once the body has been stored.
   */
  streamed?: boolean;
  /** How long a duplicate waits for the first request to finish. */
  waitMs?: number;
}

interface KeyRow {
  fingerprint: string | null;
  status: number | null;
  headers: string | null;
  body: string | null;
}

const streamedDigests = new WeakMap<Context, (digest: Promise<string>) => void>();

/**
 * `Idempotency-Key` for a POST route: the first request with a key runs and its response is
 * kept for 24 h; a retry with the same key and the same request gets that response again
 * (`Idempotent-Replayed: true`) without running; the same key with a different request is
 * 409 IDEMPOTENCY_KEY_REUSED. A duplicate that arrives while the first runs waits for it,
 * then 409 IDEMPOTENCY_KEY_IN_PROGRESS. A 5xx or 429 frees the key, so a retry runs again.
 * Keys belong to the authenticated user: mount after `requireApiKey`.
 *
 * @example
 * tasks.use("/v1/tasks", idempotency());
 */
export function idempotency(options: IdempotencyOptions = {}) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const header = c.req.header("idempotency-key");
    if (header === undefined || SAFE_METHODS.has(c.req.method)) return next();
    const store = new KeyStore(c.env.DB, c.get("userId"), parseKey(header));
    const scope = `${c.req.method} ${c.req.path}`;
    const fingerprintOf = options.fingerprint ?? bodyFingerprint;
    const known = options.streamed ? undefined : await scoped(scope, await fingerprintOf(c));
    const deadline = Date.now() + (options.waitMs ?? DEFAULT_WAIT_MS);
    for (let pause = 50; ; pause = Math.min(pause * 1.5, 500)) {
      const lease = await store.reserve(known);
      if (lease) return runFirst(c, next, store, lease, known !== undefined ? async () => known : awaitStreamedFingerprint(c, scope));
      const row = await store.read();
      if (!row) continue;
      if (known && row.fingerprint !== null && row.fingerprint !== known) throw reused();
      if (row.status !== null) {
        const fingerprint = known ?? (await scoped(scope, await fingerprintOf(c)));
        if (row.fingerprint !== fingerprint) throw reused();
        return replay(row);
      }
      if (Date.now() + pause > deadline) {
        throw new AppError("IDEMPOTENCY_KEY_IN_PROGRESS", "A request with this Idempotency-Key is still running; retry shortly to get its response.").withHeaders({ "Retry-After": "1" });
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  });
}

/**
 * For a `streamed` route: the body the handler should store, hashed on the way when the
 * request carries an Idempotency-Key. `label` adds what else identifies the upload (its name
 * and type). The same `label` and bytes must give the same fingerprint on a retry, so use
 * `fingerprintOfStream` in the route's `fingerprint` option.
 */
export function fingerprintWhileReading(c: Context, body: ReadableStream<Uint8Array>, label: string): ReadableStream<Uint8Array> {
  const report = streamedDigests.get(c);
  if (!report) return body;
  const tapped = hashingStream(body, label);
  report(tapped.digest);
  return tapped.body;
}

/** The fingerprint `fingerprintWhileReading` would give `body`, reading it to the end. */
export async function fingerprintOfStream(body: ReadableStream<Uint8Array>, label: string): Promise<string> {
  const tapped = hashingStream(body, label);
  await tapped.body.pipeTo(new WritableStream());
  return tapped.digest;
}

/** Deletes records past their 24 h, in bounded batches. Returns how many went. */
export async function sweepIdempotencyKeys(env: Env, now = new Date()): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < 20; batch++) {
    const result = await env.DB.prepare(
      "DELETE FROM idempotency_keys WHERE rowid IN (SELECT rowid FROM idempotency_keys WHERE expires_at <= ? LIMIT 1000)",
    ).bind(now.toISOString()).run();
    deleted += result.meta.changes;
    if (result.meta.changes < 1000) break;
  }
  return deleted;
}

/** Every record of the user (erasing the account); a statement, for batches. */
export function deleteUserIdempotencyKeysStatement(db: D1Database, userId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM idempotency_keys WHERE user_id = ?").bind(userId);
}

async function runFirst(c: Context<AppEnv>, next: () => Promise<void>, store: KeyStore, lease: string, fingerprint: () => Promise<string | undefined>): Promise<void> {
  // A missed renewal is tried again at the next beat: the lease spans three of them.
  const heartbeat = setInterval(() => void store.renew(lease).catch(() => {}), RENEW_EVERY_MS);
  try {
    await next();
  } catch (error) {
    await store.release(lease);
    throw error;
  } finally {
    clearInterval(heartbeat);
  }
  const status = c.res.status;
  const settled = status >= 500 || status === 429 ? undefined : await fingerprint();
  if (settled === undefined) {
    // Failed for a reason a retry may not meet again, or the body was never read: run it anew next time.
    await store.release(lease);
    return;
  }
  const headers = [...c.res.headers].filter(([name]) => !NOT_REPLAYED.test(name));
  await store.complete(lease, settled, status, JSON.stringify(headers), await c.res.clone().text());
}

function replay(row: KeyRow): Response {
  const headers = new Headers(JSON.parse(row.headers ?? "[]") as [string, string][]);
  headers.set("Idempotent-Replayed", "true");
  return new Response(row.body, { status: row.status ?? 200, headers });
}

/**
 * Lets the handler report its streamed body's digest; the returned function, called once the
 * handler is done, gives the scoped fingerprint, or undefined if the body was never read whole.
 */
function awaitStreamedFingerprint(c: Context, scope: string): () => Promise<string | undefined> {
  let reported: Promise<string> | undefined;
  streamedDigests.set(c, (digest) => {
    reported = digest;
  });
  return async () => {
    if (!reported) return undefined;
    const timeout = new Promise<undefined>((resolve) => setTimeout(resolve, STREAMED_DIGEST_WAIT_MS, undefined));
    // A body that failed leaves no digest, as a timeout does: the key is released for a retry to run anew.
    const digest = await Promise.race([reported.catch(() => undefined), timeout]);
    return digest === undefined ? undefined : scoped(scope, digest);
  };
}

async function bodyFingerprint(c: Context<AppEnv>): Promise<string> {
  // Hono caches the body, so the route's validator still reads it afterwards.
  return toHex(await crypto.subtle.digest("SHA-256", await c.req.arrayBuffer()));
}

async function scoped(scope: string, fingerprint: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(`${scope}\n${fingerprint}`)));
}

function hashingStream(body: ReadableStream<Uint8Array>, label: string): { body: ReadableStream<Uint8Array>; digest: Promise<string> } {
  const digest = new crypto.DigestStream("SHA-256");
  const writer = digest.getWriter();
  const reader = body.getReader();
  // Not awaited: a failed write errors the hash, and `digest` reports it.
  writer.write(new TextEncoder().encode(`${label}\n`)).catch(() => {});
  const hashed = digest.digest.then((buffer) => toHex(buffer));
  // Awaited by the fingerprint, if anyone asks for it; handled until then.
  hashed.catch(() => {});
  const tapped = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        // Stops the hash; the body's own failure goes on to the reader.
        await writer.abort(error).catch(() => {});
        controller.error(error);
        return;
      }
      if (chunk.done) {
        await writer.close();
        controller.close();
        return;
      }
      await writer.write(chunk.value);
      controller.enqueue(chunk.value);
    },
    async cancel(reason) {
      // The hash is not wanted once the reader cancels.
      await writer.abort(reason).catch(() => {});
      await reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  return { body: tapped, digest: hashed };
}

function parseKey(header: string): string {
  const key = /^"(.*)"$/.exec(header.trim())?.[1] ?? header.trim();
  if (!KEY_PATTERN.test(key)) throw new AppError("INVALID_IDEMPOTENCY_KEY", "Idempotency-Key must be 1 to 255 printable ASCII characters.");
  return key;
}

function reused(): AppError {
  return new AppError("IDEMPOTENCY_KEY_REUSED", "This Idempotency-Key was already used with a different request; use a new key for a new request.");
}

/** One user's record of one key in D1; every write is conditional on holding the lease. */
class KeyStore {
  constructor(
    private readonly db: D1Database,
    private readonly userId: string,
    private readonly key: string,
  ) {}

  /**
   * Reserves the key in one atomic statement: a new key, one past its 24 h, or one whose first
   * request died (lease lapsed). Returns the lease token, or undefined when someone holds it.
   */
  async reserve(fingerprint: string | undefined): Promise<string | undefined> {
    const lease = randomHex(16);
    const now = new Date();
    const row = await this.db
      .prepare(
        `INSERT INTO idempotency_keys (user_id, key, fingerprint, status, headers, body, lease_token, lease_expires_at, created_at, expires_at)
         VALUES (?1, ?2, ?3, NULL, NULL, NULL, ?4, ?5, ?6, ?7)
         ON CONFLICT (user_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, status = NULL, headers = NULL, body = NULL,
           lease_token = excluded.lease_token, lease_expires_at = excluded.lease_expires_at, created_at = excluded.created_at, expires_at = excluded.expires_at
         WHERE idempotency_keys.expires_at <= ?6 OR (idempotency_keys.status IS NULL AND idempotency_keys.lease_expires_at <= ?8)
         RETURNING lease_token`,
      )
      .bind(this.userId, this.key, fingerprint ?? null, lease, now.getTime() + LEASE_MS, now.toISOString(), new Date(now.getTime() + KEY_TTL_MS).toISOString(), now.getTime())
      .first<{ lease_token: string }>();
    return row?.lease_token === lease ? lease : undefined;
  }

  async read(): Promise<KeyRow | null> {
    return this.db
      .prepare("SELECT fingerprint, status, headers, body FROM idempotency_keys WHERE user_id = ? AND key = ? AND expires_at > ?")
      .bind(this.userId, this.key, new Date().toISOString())
      .first<KeyRow>();
  }

  async renew(lease: string): Promise<void> {
    await this.db
      .prepare("UPDATE idempotency_keys SET lease_expires_at = ? WHERE user_id = ? AND key = ? AND lease_token = ?")
      .bind(Date.now() + LEASE_MS, this.userId, this.key, lease)
      .run();
  }

  async complete(lease: string, fingerprint: string, status: number, headers: string, body: string): Promise<void> {
    await this.db
      .prepare(
        `UPDATE idempotency_keys SET fingerprint = ?, status = ?, headers = ?, body = ?, lease_token = NULL, lease_expires_at = NULL
         WHERE user_id = ? AND key = ? AND lease_token = ?`,
      )
      .bind(fingerprint, status, headers, body, this.userId, this.key, lease)
      .run();
  }

  async release(lease: string): Promise<void> {
    await this.db.prepare("DELETE FROM idempotency_keys WHERE user_id = ? AND key = ? AND lease_token = ?").bind(this.userId, this.key, lease).run();
  }
}
