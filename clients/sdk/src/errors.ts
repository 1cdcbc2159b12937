import type { Problem } from "./types.js";

/** Codes the SDK gives to failures that never reached the service as a problem. */
export type ClientErrorCode = "NETWORK_ERROR" | "FILE_NOT_FOUND" | "FILE_UNREADABLE" | "CANCELED" | "TIMEOUT" | "INVALID_RESPONSE" | "UNSAFE_FILENAME" | "NOT_SUPPORTED" | "DELIVERY_FAILED" | "OUTPUT_AT_DESTINATION";

/**
 * Every failure the SDK reports: a problem answered by the service (`status`, `code`, `title`,
 * `detail`, the whole `problem`), a failed task (`code` is its `error_code`), or a local one
 * (`status` 0 and a code such as `NETWORK_ERROR`, `FILE_NOT_FOUND` or `CANCELED`).
 *
 * @example
 * try { await ff.tasks.get("task_x") } catch (e) { if (e instanceof FFedgeError && e.code === "NOT_FOUND") ... }
 */
export class FFedgeError extends Error {
  override readonly name = "FFedgeError";
  readonly status: number;
  readonly code: string;
  readonly title: string;
  readonly detail: string;
  readonly problem: Problem;

  constructor(problem: Problem, options?: { cause?: unknown }) {
    super(`${problem.title}: ${problem.detail}`, options);
    this.status = problem.status;
    this.code = problem.code;
    this.title = problem.title;
    this.detail = problem.detail;
    this.problem = problem;
  }

  /** A failure on this side of the wire, shaped like the service's problems so callers handle one type. */
  static local(code: ClientErrorCode | string, title: string, detail: string, cause?: unknown): FFedgeError {
    return new FFedgeError({ type: "about:blank", status: 0, code, title, detail }, { cause });
  }
}

/** The error for an answer that is not 2xx: its problem document when it sent one, else one made from the status. */
export async function errorFromResponse(response: Response): Promise<FFedgeError> {
  const text = await response.text().catch(() => "");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (isProblem(body)) return new FFedgeError({ ...body, status: response.status });
  const code = CODE_BY_STATUS[response.status] ?? (response.status >= 500 ? "INTERNAL" : "HTTP_ERROR");
  const title = response.statusText || `HTTP ${response.status}`;
  const detail = text.trim().slice(0, 300) || `${response.url} answered ${response.status}.`;
  return new FFedgeError({ type: "about:blank", status: response.status, code, title, detail });
}

const CODE_BY_STATUS: Record<number, string> = { 401: "UNAUTHORIZED", 404: "NOT_FOUND", 413: "REQUEST_TOO_LARGE", 429: "RATE_LIMITED" };

function isProblem(value: unknown): value is Problem {
  return typeof value === "object" && value !== null && typeof (value as Problem).code === "string" && typeof (value as Problem).title === "string";
}
