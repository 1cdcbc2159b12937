import { AppError } from "../../shared/errors";
import { checkFetchUrl, checkRedirect } from "../../shared/net/url-policy";
import { config } from "./config";
import { log } from "./log";

const MAX_REDIRECTS = 3;
const DEFAULT_TIMEOUT_MS = 30_000;

export interface GuardedFetchInit {
  /** The whole exchange, body included. */
  timeoutMs?: number;
  /**
   * Stalls: the headers must arrive within this long (URL_TIMEOUT), and afterwards every read of
   * the body must bring bytes within this long, however large the file (UPLOAD_SOURCE_STALLED).
   */
  idleTimeoutMs?: number;
  method?: string;
  headers?: HeadersInit;
  body?: BodyInit;
  /** False: a 3xx is returned as the answer instead of being followed (webhooks: a redirect is a failed delivery). */
  followRedirects?: boolean;
}

export interface GuardedResponse {
  response: Response;
  url: URL;
}

/**
 * The Worker's only way to fetch a URL a stranger wrote. Every hop is checked by the shared
 * URL policy, each Location as the server wrote it; redirects are followed by hand. Names that resolve to private addresses are
 * not reachable from Workers' fetch in production (Cloudflare does not route to them), so the
 * name check here is about literals and well-known internal names.
 */
export async function guardedFetch(env: Env, raw: string, init: GuardedFetchInit = {}): Promise<GuardedResponse> {
  const allowHosts = config(env).devFetchAllowHosts;
  let url = checkFetchUrl(raw, { allowHosts });
  const deadline = AbortSignal.timeout(init.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  for (let hop = 0; ; hop++) {
    const waitMs = Math.min(init.timeoutMs ?? DEFAULT_TIMEOUT_MS, init.idleTimeoutMs ?? Infinity);
    const headersLate = new AbortController();
    const headersTimer = setTimeout(() => headersLate.abort(), waitMs);
    const signal = AbortSignal.any([deadline, headersLate.signal]);
    let response: Response;
    try {
      response = await fetch(url.toString(), { method: init.method ?? "GET", headers: init.headers, body: init.body, redirect: "manual", signal });
    } catch (error) {
      if (signal.aborted) throw new AppError("URL_TIMEOUT", `${url.host} did not answer within ${waitMs / 1000} s.`);
      throw connectFailure(url, error);
    } finally {
      clearTimeout(headersTimer);
    }
    if (response.status < 300 || response.status >= 400 || !response.headers.has("location") || init.followRedirects === false) {
      if (!init.idleTimeoutMs || !response.body) return { response, url };
      const body = stallGuard(response.body, init.idleTimeoutMs, url.host, { deadline, timeoutMs: init.timeoutMs ?? DEFAULT_TIMEOUT_MS });
      return { response: new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers }), url };
    }
    await response.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new AppError("URL_TOO_MANY_REDIRECTS", `More than ${MAX_REDIRECTS} redirects starting at ${raw}.`);
    url = checkRedirect(response.headers.get("location")!, url, { allowHosts });
  }
}

/**
 * workerd keeps the cause of a failed connection to itself: it logs it on its own side and
 * hands the Worker only "Network connection lost." or "internal error; reference = …"
 * (https://github.com/cloudflare/workerd/issues/1401). The cause is named from that message and
 * the URL; the runtime's words go to our log, never to the caller.
 */
export function connectFailure(url: URL, error: unknown): AppError {
  const message = error instanceof Error ? error.message : String(error);
  log.warn("outbound fetch failed", { host: url.host, error: message });
  return new AppError("URL_UNREACHABLE", `Could not connect to ${url.host}: ${connectCause(url, message)}.`);
}

function connectCause(url: URL, message: string): string {
  if (/network connection lost/i.test(message)) return "the connection was refused or closed before an answer";
  const secure = url.protocol === "https:";
  // An address written out needs no DNS, so only the connection or its TLS handshake can have failed.
  if (/^[\d.]+$|^\[/.test(url.hostname)) return secure ? "the TLS handshake failed (certificate or protocol not accepted)" : "the connection failed";
  return secure ? "the name does not resolve, or the TLS handshake failed (certificate or protocol not accepted)" : "the name does not resolve";
}

/**
 * `body`, failing with UPLOAD_SOURCE_STALLED (and closing the connection) when a read waits
 * on the remote longer than `idleMs`. Only time spent waiting for the remote counts: a
 * consumer that reads slowly (R2 taking its time) never trips it. A body that breaks off or
 * outlives the whole exchange's deadline fails with our own words (URL_UNREACHABLE, URL_TIMEOUT).
 */
function stallGuard(body: ReadableStream<Uint8Array>, idleMs: number, host: string, whole: { deadline: AbortSignal; timeoutMs: number }): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let received = 0;
  const named = (error: unknown): unknown => {
    if (error instanceof AppError) return error;
    if (whole.deadline.aborted) return new AppError("URL_TIMEOUT", `${host} did not finish sending the file within ${duration(whole.timeoutMs)}.`);
    log.warn("outbound body failed", { host, received, error: error instanceof Error ? error.message : error });
    return new AppError("URL_UNREACHABLE", `The connection to ${host} broke after ${received} bytes of the download.`);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new AppError("UPLOAD_SOURCE_STALLED", `${host} sent nothing for ${idleMs / 1000} s; the download was abandoned.`)), idleMs);
      });
      try {
        const { done, value } = await Promise.race([reader.read(), stalled]);
        if (done) controller.close();
        else {
          received += value.byteLength;
          controller.enqueue(value);
        }
      } catch (caught) {
        const error = named(caught);
        // Closes the connection; `error` is what the reader hears.
        reader.cancel(error).catch(() => {});
        controller.error(error);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}

function duration(ms: number): string {
  if (ms % 60_000 !== 0) return `${ms / 1000} s`;
  return ms === 60_000 ? "1 minute" : `${ms / 60_000} minutes`;
}
