import { AppError } from "../../shared/errors";
import { checkFetchUrl } from "../../shared/net/url-policy";
import { config } from "./config";

const MAX_REDIRECTS = 3;
const DEFAULT_TIMEOUT_MS = 30_000;

export interface GuardedFetchInit {
  timeoutMs?: number;
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
 * URL policy; redirects are followed by hand. Names that resolve to private addresses are
 * not reachable from Workers' fetch in production (Cloudflare does not route to them), so the
 * name check here is about literals and well-known internal names.
 */
export async function guardedFetch(env: Env, raw: string, init: GuardedFetchInit = {}): Promise<GuardedResponse> {
  const allowHosts = config(env).devFetchAllowHosts;
  let url = checkFetchUrl(raw, { allowHosts });
  const signal = AbortSignal.timeout(init.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  for (let hop = 0; ; hop++) {
    let response: Response;
    try {
      response = await fetch(url.toString(), { method: init.method ?? "GET", headers: init.headers, body: init.body, redirect: "manual", signal });
    } catch (error) {
      if (signal.aborted) throw new AppError("URL_TIMEOUT", `${url.host} did not answer within ${(init.timeoutMs ?? DEFAULT_TIMEOUT_MS) / 1000} s.`);
      throw new AppError("URL_UNREACHABLE", `${url.host} could not be reached: ${(error as Error).message}.`);
    }
    if (response.status < 300 || response.status >= 400 || !response.headers.has("location") || init.followRedirects === false) return { response, url };
    await response.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new AppError("URL_TOO_MANY_REDIRECTS", `More than ${MAX_REDIRECTS} redirects starting at ${raw}.`);
    url = checkFetchUrl(new URL(response.headers.get("location")!, url).toString(), { allowHosts });
  }
}
