import { AppError } from "../../shared/errors";
import { checkFetchUrl, checkRedirect } from "../../shared/net/url-policy";
import { config } from "./config";

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
      throw new AppError("URL_UNREACHABLE", `${url.host} could not be reached: ${(error as Error).message}.`);
    } finally {
      clearTimeout(headersTimer);
    }
    if (response.status < 300 || response.status >= 400 || !response.headers.has("location") || init.followRedirects === false) {
      if (!init.idleTimeoutMs || !response.body) return { response, url };
      const body = stallGuard(response.body, init.idleTimeoutMs, url.host);
      return { response: new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers }), url };
    }
    await response.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new AppError("URL_TOO_MANY_REDIRECTS", `More than ${MAX_REDIRECTS} redirects starting at ${raw}.`);
    url = checkRedirect(response.headers.get("location")!, url, { allowHosts });
  }
}

/**
 * `body`, failing with UPLOAD_SOURCE_STALLED (and closing the connection) when a read waits
 * on the remote longer than `idleMs`. Only time spent waiting for the remote counts: a
 * consumer that reads slowly (R2 taking its time) never trips it.
 */
function stallGuard(body: ReadableStream<Uint8Array>, idleMs: number, host: string): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const stalled = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new AppError("UPLOAD_SOURCE_STALLED", `${host} sent nothing for ${idleMs / 1000} s; the download was abandoned.`)), idleMs);
      });
      try {
        const { done, value } = await Promise.race([reader.read(), stalled]);
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        reader.cancel(error).catch(() => {});
        controller.error(error);
      } finally {
        clearTimeout(timer);
      }
    },
    cancel: (reason) => reader.cancel(reason),
  }, { highWaterMark: 0 });
}
