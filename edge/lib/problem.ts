import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { AppError, problemBody } from "../../shared/errors";
import { log } from "./log";

/** The single place where any error becomes an RFC 9457 response. */
export function problemResponse(error: AppError, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(problemBody(error)), {
    status: error.status,
    headers: { ...error.headers, ...Object.fromEntries(new Headers(headers)), "content-type": "application/problem+json" },
  });
}

export function onError(error: Error, c: Context): Response {
  if (error instanceof AppError) return problemResponse(error);
  if (error instanceof HTTPException) return problemResponse(fromHttpException(error));
  log.error("unhandled error", { method: c.req.method, path: c.req.path, error, stack: error.stack });
  return problemResponse(storageFailure(error) ?? new AppError("INTERNAL", "An internal error occurred. It has been logged."));
}

const DISK_FULL = /SQLITE_FULL|database or disk is full|ENOSPC|no space left on device/i;
// D1's and R2's own failures; workerd reports a storage fault it cannot name as an "internal error".
const STORE_DOWN = /D1_ERROR|SQLITE_[A-Z]+|^(put|get|head|delete|list|createMultipartUpload|uploadPart|complete|abort): |internal error; reference/im;

/**
 * Failures of D1 or R2 themselves, whichever call met them: a full disk (the local state
 * directory) is 507, any other storage fault 503, both with Retry-After and
 * nothing of the runtime's message on the wire. Every write path deletes what it half-wrote
 * before the error reaches here.
 */
function storageFailure(error: Error): AppError | undefined {
  const text = causeChain(error);
  if (DISK_FULL.test(text)) {
    return new AppError("STORAGE_FULL", "The service's storage is full, so nothing was stored; retry later.").withHeaders({ "Retry-After": "60" });
  }
  if (STORE_DOWN.test(text)) {
    return new AppError("STORAGE_UNAVAILABLE", "The service's storage did not answer, so nothing was stored; retry shortly.").withHeaders({ "Retry-After": "5" });
  }
  return undefined;
}

function causeChain(error: unknown, depth = 0): string {
  if (!(error instanceof Error) || depth > 4) return String(error);
  return `${error.name}: ${error.message} ${error.cause === undefined ? "" : causeChain(error.cause, depth + 1)}`;
}

/** Hono's validators throw HTTPException before a handler runs; each gets its catalogue code. */
function fromHttpException(error: HTTPException): AppError {
  switch (error.status) {
    case 401:
      return new AppError("UNAUTHORIZED", error.message || "A valid API key is required.");
    case 413:
      return new AppError("PAYLOAD_TOO_LARGE", error.message || "The request body is too large.");
    case 415:
      return new AppError("UNSUPPORTED_MEDIA_TYPE", "This endpoint does not accept the request's Content-Type; /openapi.json lists what it takes.");
    default:
      // hono/validator's only message for a body that JSON.parse refused.
      if (/malformed json/i.test(error.message)) return new AppError("INVALID_JSON", "The request body is not valid JSON.");
      return new AppError("VALIDATION_FAILED", error.message || "The request was not accepted.");
  }
}
