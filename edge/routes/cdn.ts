import { Hono } from "hono";
import { AppError } from "../../shared/errors";
import { isActiveContent } from "../files/content-type";

/** Keys the CDN serves: uploads and task outputs, nothing else in the bucket. */
const SERVED_KEY = /^(uploads\/[A-Za-z0-9_-]+\/[A-Za-z0-9._-]+|outputs\/[A-Za-z0-9_-]+\/[A-Za-z0-9_-]+\/[A-Za-z0-9._%-]+)$/;
const MAX_CACHE_SECONDS = 86_400;

const notFound = () => new AppError("NOT_FOUND", "No such file, or it has expired.");

/** The CDN download routes, `GET`/`HEAD {PUBLIC_URL}/uploads/...` and `/outputs/...`, served from R2. */
export const cdn = new Hono<{ Bindings: Env }>();

cdn.on(["GET", "HEAD"], "/:area{uploads|outputs}/*", async (c) => {
  const key = decodedKey(new URL(c.req.url).pathname);
  if (key === undefined || !SERVED_KEY.test(key) || key.split("/").some((segment) => segment === "." || segment === "..")) throw notFound();
  const head = await c.env.FILES.head(key);
  if (!head) throw notFound();
  const expiresAt = Date.parse(head.customMetadata?.expires_at ?? "");
  const remainingSeconds = Math.floor((expiresAt - Date.now()) / 1000);
  // R2 lifecycle rules delete "typically within 24 hours" of expiry: refuse expired files ourselves.
  if (!Number.isFinite(expiresAt) || remainingSeconds <= 0) throw notFound();

  const headers = baseHeaders(head, key, Math.min(remainingSeconds, MAX_CACHE_SECONDS));
  if (notModified(c.req.raw.headers, head)) return new Response(null, { status: 304, headers });

  const range = parseRange(c.req.header("range"), head.size);
  if (range === "unsatisfiable") {
    headers.set("content-range", `bytes */${head.size}`);
    return new Response(null, { status: 416, headers });
  }
  const status = range ? 206 : 200;
  const length = range ? range.length : head.size;
  headers.set("content-length", String(length));
  if (range) headers.set("content-range", `bytes ${range.offset}-${range.offset + range.length - 1}/${head.size}`);
  if (c.req.method === "HEAD") return new Response(null, { status, headers });

  const object = await c.env.FILES.get(key, range ? { range: { offset: range.offset, length: range.length } } : {});
  if (!object) throw notFound();
  return new Response(object.body, { status, headers });
});

function baseHeaders(object: R2Object, key: string, maxAge: number): Headers {
  const headers = new Headers();
  const contentType = object.httpMetadata?.contentType ?? "application/octet-stream";
  headers.set("content-type", contentType);
  headers.set("etag", object.httpEtag);
  headers.set("last-modified", object.uploaded.toUTCString());
  headers.set("cache-control", `public, max-age=${maxAge}`);
  headers.set("accept-ranges", "bytes");
  headers.set("x-content-type-options", "nosniff");
  headers.set("access-control-allow-origin", "*");
  headers.set("access-control-expose-headers", "content-length, content-range, etag");
  if (isActiveContent(contentType) || /^attachment/i.test(object.httpMetadata?.contentDisposition ?? "")) {
    headers.set("content-disposition", `attachment; filename="${key.split("/").pop()}"`);
    headers.set("content-security-policy", "sandbox; default-src 'none'");
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

function notModified(request: Headers, object: R2Object): boolean {
  const ifNoneMatch = request.get("if-none-match");
  if (ifNoneMatch !== null) {
    return ifNoneMatch.trim() === "*" || ifNoneMatch.split(",").some((tag) => tag.trim().replace(/^W\//, "") === object.httpEtag);
  }
  const since = Date.parse(request.get("if-modified-since") ?? "");
  return Number.isFinite(since) && Math.floor(object.uploaded.getTime() / 1000) <= Math.floor(since / 1000);
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
