import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { AppError, problemBody } from "../../shared/errors";

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
  console.error(JSON.stringify({ msg: "unhandled error", method: c.req.method, path: c.req.path, error: String(error), stack: error.stack }));
  return problemResponse(new AppError("INTERNAL", "An internal error occurred. It has been logged."));
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
