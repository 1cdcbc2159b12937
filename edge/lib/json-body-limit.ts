import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { AppError } from "../../shared/errors";

/**
 * The largest JSON body any route reads, base64 uploads aside (they declare their own cap). JSON
 * is parsed whole, so an undeclared bound let a 450 MB body be buffered before it was refused.
 * The largest legitimate body is a transcoder report with 256 KiB of ffmpeg log, escaped.
 */
const MAX_JSON_BODY_BYTES = 4 * 1024 * 1024;
const OWN_LIMIT = new Set(["/api/upload/base64"]);

/** 413 PAYLOAD_TOO_LARGE for a JSON body over the bound: from Content-Length before reading, or as soon as a streamed body passes it. */
export const limitJsonBodies = createMiddleware(async (c, next) => {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/([a-z0-9.+-]*\+)?json\b/i.test(type.trim()) || OWN_LIMIT.has(c.req.path)) return next();
  return bodyLimit({
    maxSize: MAX_JSON_BODY_BYTES,
    onError: () => {
      throw new AppError("PAYLOAD_TOO_LARGE", `A JSON request body may be at most ${MAX_JSON_BODY_BYTES} bytes.`, { limit: MAX_JSON_BODY_BYTES });
    },
  })(c, next);
});
