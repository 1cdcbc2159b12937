import type { Problem } from "./types";

/** The console's own mount of the API: the session cookie (and its CSRF token) instead of a key. */
export const API = "/console/api";

let csrfToken: string | null = null;

/** The session's CSRF token, sent on every request that changes something. */
export function csrf(): string | null {
  return csrfToken;
}

export function setCsrf(token: string): void {
  csrfToken = token;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail || problem.title || `Request failed (${status})`);
  }
}

interface ApiOptions {
  method?: string;
  headers?: HeadersInit;
  json?: unknown;
  /** A 401 is the caller's to explain (a wrong password) rather than an ended session. */
  expect401?: boolean;
}

/** Calls the console's API; a non-2xx answer throws an ApiError carrying its problem details. */
export async function api<T = unknown>(path: string, options: ApiOptions = {}): Promise<T> {
  const headers = new Headers(options.headers);
  let body: string | undefined;
  if (options.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(options.json);
  }
  const method = options.method || "GET";
  if (method !== "GET" && csrfToken) headers.set("x-csrf-token", csrfToken);
  const response = await fetch(API + path, { method, headers, body, credentials: "same-origin" });
  if (response.status === 401 && !options.expect401) {
    toSignIn("expired");
    throw new ApiError(401, { detail: "Your session has ended." });
  }
  // A body that is not JSON still leaves the status to report.
  if (!response.ok) throw new ApiError(response.status, (await response.json().catch(() => ({}))) as Problem);
  if (response.status === 204) return null as T;
  return (await response.json()) as T;
}

/** The path of one task under the API. */
export function taskPath(taskId: string): string {
  return `/v1/tasks/${encodeURIComponent(taskId)}`;
}

/** The error's problem code when the API refused, undefined for anything else (a network error, a bug). */
export function problemCode(error: unknown): string | undefined {
  return error instanceof ApiError ? error.problem.code : undefined;
}

export function isStatus(error: unknown, status: number): boolean {
  return error instanceof ApiError && error.status === status;
}

function toSignIn(reason: string): void {
  const next = location.pathname + location.search;
  location.assign(`/console/signin?${new URLSearchParams({ next, reason })}`);
}
