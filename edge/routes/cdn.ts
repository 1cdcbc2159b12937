import { type Context, Hono } from "hono";
import { AppError } from "../../shared/errors";
import { EDGE_CACHE_SECONDS, MAX_CACHED_BYTES, cacheKeyFor } from "../files/cdn-cache";
import { servedInline } from "../files/content-type";
import { expiryOf } from "../files/records";

/** Keys the CDN serves: uploads and task outputs, nothing else in the bucket. */
const SERVED_KEY = /^(uploads\/[A-Za-z0-9_-]+\/[A-Za-z0-9._-]+|outputs\/[A-Za-z0-9_-]+\/[A-Za-z0-9_-]+\/[A-Za-z0-9._%-]+)$/;
const MAX_BROWSER_CACHE_SECONDS = 86_400;
/** Every CDN answer: user content never runs script or loads anything, whatever its type. */
const SANDBOX_CSP = "sandbox; default-src 'none'";

const notFound = () => new AppError("NOT_FOUND", "No such file, or it has expired.");

/**
 * The CDN download routes, `GET`/`HEAD {PUBLIC_URL}/uploads/...` and `/outputs/...`: the
 * data center's Cache API first (it answers Range and conditional requests itself and marks
 * hits `CF-Cache-Status: HIT`), R2 on a miss. Only a plain GET of the whole file fills the
 * cache, from the very bytes it sends the client: a fill that reads the object again, or that
 * streams a body nobody receives (a HEAD, a range, a 304), would run in `waitUntil`, whose 30 s
 * after the answer cannot store a large file and whose R2 read is paid twice.
 * https://developers.cloudflare.com/workers/runtime-apis/context/#waituntil
 */
export const cdn = new Hono<{ Bindings: Env }>();

cdn.on(["GET", "HEAD"], "/:area{uploads|outputs}/*", async (c) => {
  const key = decodedKey(new URL(c.req.url).pathname);
  if (key === undefined || !SERVED_KEY.test(key) || key.split("/").some((segment) => segment === "." || segment === "..")) throw notFound();
  const head = c.req.method === "HEAD";
  const range = c.req.header("range");
  const singleRange = range !== undefined && /^bytes=(\d+-\d*|-\d+)$/.test(range.trim()) ? range : undefined;

  const lookup = cacheKeyFor(c.env, key);
  const hit = await fromCache(c.req.raw, lookup, singleRange);
  if (hit) {
    if (head) await hit.body?.cancel();
    return new Response(head ? null : hit.body, { status: hit.status, headers: hit.headers });
  }

  // A plain or conditional GET (the transcoder's input download is one) is a single R2 read:
  // its metadata answers the conditions, its body the client and, sent whole, the cache. A HEAD or a range
  // needs the size first (suffix and unsatisfiable ranges), so it reads the metadata, then the range.
  if (!head && !singleRange) return wholeFile(c.env, executionContext(c), c.req.raw, key, lookup);

  const object = await c.env.FILES.head(key);
  if (!object) throw notFound();
  const remainingSeconds = await remainingLifetime(c.env, object);
  // R2 lifecycle rules delete "typically within 24 hours" of expiry: refuse expired files ourselves.
  if (remainingSeconds === undefined || remainingSeconds <= 0) throw notFound();

  // A ranged or HEAD request is answered from R2 as asked, and fills nothing (see `cdn`).
  const headers = baseHeaders(object, key, remainingSeconds);
  if (notModified(c.req.raw.headers, object.httpEtag, object.uploaded)) return new Response(null, { status: 304, headers });
  const parsed = parseRange(singleRange, object.size);
  if (parsed === "unsatisfiable") {
    headers.set("content-range", `bytes */${object.size}`);
    return new Response(null, { status: 416, headers });
  }
  headers.set("content-length", String(parsed ? parsed.length : object.size));
  if (parsed) headers.set("content-range", `bytes ${parsed.offset}-${parsed.offset + parsed.length - 1}/${object.size}`);
  const status = parsed ? 206 : 200;
  if (head) return new Response(null, { status, headers });

  const body = await c.env.FILES.get(key, parsed ? { range: { offset: parsed.offset, length: parsed.length } } : {});
  if (!body) throw notFound();
  return new Response(body.body, { status, headers });
});

/** A GET of the whole file, or a conditional one, on a cache miss: one R2 `get`, which fills the cache when it sends the whole file. */
async function wholeFile(env: Env, context: { waitUntil(promise: Promise<unknown>): void } | undefined, request: Request, key: string, lookup: Request): Promise<Response> {
  const object = await env.FILES.get(key);
  if (!object) throw notFound();
  const remainingSeconds = await remainingLifetime(env, object);
  // R2 lifecycle rules delete "typically within 24 hours" of expiry: refuse expired files ourselves.
  if (remainingSeconds === undefined || remainingSeconds <= 0) {
    await object.body.cancel();
    throw notFound();
  }
  const headers = baseHeaders(object, key, remainingSeconds);
  const full = new Headers(headers);
  full.set("content-length", String(object.size));
  if (notModified(request.headers, object.httpEtag, object.uploaded)) {
    await object.body.cancel();
    return new Response(null, { status: 304, headers });
  }
  if (object.size > MAX_CACHED_BYTES || !context) return new Response(object.body, { status: 200, headers: full });
  // One R2 read serves the client and the cache.
  const [toClient, toCache] = object.body.tee();
  context.waitUntil(caches.default.put(lookup.url, new Response(toCache, { status: 200, headers: full })));
  return new Response(toClient, { status: 200, headers: withCacheStatus(full, "MISS") });
}

/**
 * The request's execution context; none when a container's input download is answered inside
 * its outbound handler (edge/dispatch/transcoder-container.ts), which then fills no cache.
 */
function executionContext(c: Context<{ Bindings: Env }>): { waitUntil(promise: Promise<unknown>): void } | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}

/**
 * The answer from this data center's cache, if it holds the file. Conditional and Range
 * requests are judged here by RFC 9110 from the cached headers (cache implementations differ
 * on edge cases such as suffix ranges longer than the file); the cache then serves the byte
 * range itself, so a seek into a large video never streams the bytes before it.
 */
async function fromCache(request: Request, lookup: Request, range: string | undefined): Promise<Response | undefined> {
  const cached = await caches.default.match(lookup);
  if (!cached) return undefined;
  const headers = new Headers(cached.headers);
  const size = Number(headers.get("content-length"));
  if (notModified(request.headers, headers.get("etag") ?? "", new Date(headers.get("last-modified") ?? 0))) {
    await cached.body?.cancel();
    headers.delete("content-length");
    return new Response(null, { status: 304, headers });
  }
  const parsed = parseRange(range, size);
  if (parsed === undefined) return cached;
  await cached.body?.cancel();
  if (parsed === "unsatisfiable") {
    headers.set("content-range", `bytes */${size}`);
    headers.delete("content-length");
    return new Response(null, { status: 416, headers });
  }
  const ranged = new Request(lookup, { headers: { range: `bytes=${parsed.offset}-${parsed.offset + parsed.length - 1}` } });
  const partial = await caches.default.match(ranged);
  return partial?.status === 206 ? partial : undefined;
}

/** Seconds until the file expires: from the object's metadata, or from its D1 row (presigned R2 uploads carry no metadata). */
async function remainingLifetime(env: Env, object: R2Object): Promise<number | undefined> {
  let expiresAt = object.customMetadata?.expires_at;
  if (expiresAt === undefined) {
    expiresAt = await expiryOf(env.DB, object.key);
  }
  const time = Date.parse(expiresAt ?? "");
  return Number.isFinite(time) ? Math.floor((time - Date.now()) / 1000) : undefined;
}

function withCacheStatus(headers: Headers, status: string): Headers {
  const copy = new Headers(headers);
  copy.set("cf-cache-status", status);
  return copy;
}

function baseHeaders(object: R2Object, key: string, remainingSeconds: number): Headers {
  const headers = new Headers();
  const contentType = object.httpMetadata?.contentType ?? "application/octet-stream";
  headers.set("content-type", contentType);
  headers.set("etag", object.httpEtag);
  headers.set("last-modified", object.uploaded.toUTCString());
  // Browsers may keep the file until it expires; the edge cache re-reads R2 sooner (see EDGE_CACHE_SECONDS).
  headers.set("cache-control", `public, max-age=${Math.min(remainingSeconds, MAX_BROWSER_CACHE_SECONDS)}, s-maxage=${Math.min(remainingSeconds, EDGE_CACHE_SECONDS)}`);
  headers.set("accept-ranges", "bytes");
  headers.set("x-content-type-options", "nosniff");
  headers.set("content-security-policy", SANDBOX_CSP);
  headers.set("access-control-allow-origin", "*");
  headers.set("access-control-expose-headers", "content-length, content-range, etag");
  if (!servedInline(contentType) || /^attachment/i.test(object.httpMetadata?.contentDisposition ?? "")) {
    headers.set("content-disposition", `attachment; filename="${key.split("/").pop()}"`);
  }
  return headers;
}

/** The object key a CDN path names; undefined when its percent-encoding is malformed. */
function decodedKey(pathname: string): string | undefined {
  try {
    return decodeURIComponent(pathname.slice(1));
  } catch {
    return undefined;
  }
}

function notModified(request: Headers, etag: string, lastModified: Date): boolean {
  const ifNoneMatch = request.get("if-none-match");
  if (ifNoneMatch !== null) {
    return ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag);
  }
  const since = Date.parse(request.get("if-modified-since") ?? "");
  return Number.isFinite(since) && Math.floor(lastModified.getTime() / 1000) <= Math.floor(since / 1000);
}

/** One `bytes=` range (RFC 9110 §14.1.2). Syntax we do not serve (several ranges) is ignored. */
function parseRange(header: string | undefined, size: number): { offset: number; length: number } | "unsatisfiable" | undefined {
  if (!header) return undefined;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return undefined;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    const length = Math.min(suffix, size);
    return { offset: size - length, length };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return { offset: start, length: end - start + 1 };
}
