import { FFedgeError, errorFromResponse } from "./errors.js";

export interface HttpOptions {
  baseUrl: string;
  apiKey: string | undefined;
  fetch: typeof fetch;
  maxRetries: number;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: BodyInit | null;
  /** JSON body; sent as exactly these bytes on every attempt, so an Idempotency-Key replay matches. */
  json?: unknown;
  signal?: AbortSignal;
  /** Whether a retry is safe though the method is not (a POST with an Idempotency-Key, a tus PATCH checked by offset). */
  idempotent?: boolean;
  /** Off for an upload body that cannot be sent twice. */
  retry?: boolean;
  /** Statuses that are answers to return, not errors to throw. */
  accept?: number[];
  /** An absolute URL in place of baseUrl + path (tus Location, presigned PUT). */
  absolute?: boolean;
  /** Presigned storage URLs carry their own authority: never send them the key. */
  auth?: boolean;
  /** Required by fetch for a ReadableStream body. */
  duplex?: "half";
}

const SAFE = new Set(["GET", "HEAD", "DELETE", "OPTIONS", "PUT"]);
const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);
const BASE_DELAY_MS = 500;
const MAX_DELAY_MS = 20_000;

/** One HTTP call to the service with the key in a header (never the URL), retried where that is safe. */
export async function request(http: HttpOptions, path: string, options: RequestOptions = {}): Promise<Response> {
  const method = options.method ?? (options.json === undefined && options.body === undefined ? "GET" : "POST");
  const url = options.absolute ? path : `${http.baseUrl}${path}`;
  const headers = new Headers(options.headers);
  if (options.auth !== false && http.apiKey) headers.set("authorization", `Bearer ${http.apiKey}`);
  let body = options.body ?? null;
  if (options.json !== undefined) {
    headers.set("content-type", "application/json");
    body = JSON.stringify(options.json);
  }
  const retryable = options.retry !== false && (SAFE.has(method) || options.idempotent === true || headers.has("idempotency-key"));
  for (let attempt = 0; ; attempt++) {
    throwIfAborted(options.signal);
    let response: Response;
    try {
      const init: RequestInit & { duplex?: "half" } = { method, headers, body, signal: options.signal, ...(options.duplex ? { duplex: options.duplex } : {}) };
      response = await http.fetch(url, init);
    } catch (error) {
      if (options.signal?.aborted) throw canceled(options.signal);
      if (retryable && attempt < http.maxRetries) {
        await sleep(backoff(attempt), options.signal);
        continue;
      }
      throw networkError(url, error);
    }
    if (response.ok || options.accept?.includes(response.status)) return response;
    if (retryable && attempt < http.maxRetries && RETRY_STATUS.has(response.status)) {
      const wait = retryAfterMs(response.headers.get("retry-after")) ?? backoff(attempt);
      await response.body?.cancel().catch(() => {});
      await sleep(wait, options.signal);
      continue;
    }
    throw await errorFromResponse(response);
  }
}

export async function requestJson<T>(http: HttpOptions, path: string, options: RequestOptions = {}): Promise<T> {
  const response = await request(http, path, options);
  try {
    return (await response.json()) as T;
  } catch (error) {
    throw FFedgeError.local("INVALID_RESPONSE", "Invalid response", `${path} did not answer with JSON.`, error);
  }
}

/** Full jitter: a random wait up to the exponential ceiling, so many clients do not retry in step. */
export function backoff(attempt: number): number {
  return Math.random() * Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt);
}

/** `Retry-After` as delay-seconds or an HTTP date; capped so a confused server cannot stall the caller for hours. */
export function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isNaN(ms) ? undefined : Math.min(Math.max(ms, 0), 60_000);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(canceled(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(canceled(signal!));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw canceled(signal);
}

export function canceled(signal: AbortSignal): FFedgeError {
  if (signal.reason instanceof FFedgeError) return signal.reason;
  return FFedgeError.local("CANCELED", "Canceled", "The operation was canceled.", signal.reason);
}

export function networkError(url: string, error: unknown): FFedgeError {
  const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
  return FFedgeError.local("NETWORK_ERROR", "Network error", `Could not reach ${new URL(url).origin}: ${reason}.`, error);
}
