import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { AppError, problemBody } from "../../shared/errors";

/** The single place where any error becomes an RFC 9457 response. */
export function problemResponse(error: AppError, headers: HeadersInit = {}): Response {
  return new Response(JSON.stringify(problemBody(error)), {
    status: error.status,
    headers: { "content-type": "application/problem+json", ...Object.fromEntries(new Headers(headers)) },
  });
}

export function onError(error: Error, c: Context): Response {
  if (error instanceof AppError) return problemResponse(error);
  if (error instanceof HTTPException) {
    const code = error.status === 413 ? "PAYLOAD_TOO_LARGE" : error.status === 401 ? "UNAUTHORIZED" : "VALIDATION_FAILED";
    return problemResponse(new AppError(code, error.message || "The request was not accepted."));
  }
  console.error(JSON.stringify({ msg: "unhandled error", method: c.req.method, path: c.req.path, error: String(error), stack: error.stack }));
  return problemResponse(new AppError("INTERNAL", "An internal error occurred. It has been logged."));
}
