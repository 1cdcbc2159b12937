import { AppError } from "../../shared/errors";
import { config } from "../lib/config";
import { canPresign } from "./presign";

/**
 * The upload paths whose bytes never pass through one large request body to the Worker: a
 * presigned PUT goes straight to R2 (only where R2 credentials are configured; otherwise its
 * upload_url is the Worker itself), and tus sends the file in chunks, each its own request.
 */
function bodylessAlternatives(env: Env, requestUrl: string): { presigned_put?: string; tus: string } {
  const origin = new URL(requestUrl).origin;
  return { ...(canPresign(env) ? { presigned_put: `${origin}/v1/uploads/sign` } : {}), tus: `${origin}/api/upload/tus` };
}

/**
 * 413 for a request body over MAX_REQUEST_BODY_BYTES although the file itself is within
 * MAX_UPLOAD_BYTES: the same file goes through with a presigned PUT or tus. `alternatives`
 * tells it apart from a file over the upload limit, which no path takes.
 */
export function requestTooLarge(env: Env, requestUrl: string, size: number | undefined, subject = "The request body"): AppError {
  const { maxRequestBodyBytes: limit, maxUploadBytes } = config(env);
  const alternatives = bodylessAlternatives(env, requestUrl);
  const measured = size === undefined ? `${subject} passed ${limit} bytes` : `${subject} is ${size} bytes`;
  const presigned = alternatives.presigned_put
    ? `a presigned PUT (POST ${alternatives.presigned_put}, then PUT the file to its upload_url, straight to storage) or `
    : "";
  return new AppError(
    "REQUEST_TOO_LARGE",
    `${measured}; this deployment takes request bodies of at most ${limit} bytes (Cloudflare's plans refuse larger ones: 100 MB Free and Pro, 200 MB Business, 500 MB Enterprise). ` +
      `Files up to ${maxUploadBytes} bytes go another way: ${presigned}tus, resumable, in chunks below ${limit} bytes (${alternatives.tus}).`,
    { limit, max_upload_bytes: maxUploadBytes, alternatives },
  );
}

/**
 * `request` with its body counted as it is read: past `limit` bytes the body fails, and
 * `exceeded()` says so, so the caller answers 413 rather than whatever the reader made of the
 * broken stream. For bodies without Content-Length (chunked), which cannot be refused up front.
 */
export function limitRequestBody(request: Request, limit: number): { request: Request; exceeded: () => boolean } {
  if (!request.body) return { request, exceeded: () => false };
  let seen = 0;
  let over = false;
  const counted = request.body.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > limit) {
        over = true;
        controller.error(new Error(`The request body passed ${limit} bytes.`));
        return;
      }
      controller.enqueue(chunk);
    },
  }));
  return { request: new Request(request, { body: counted }), exceeded: () => over };
}
