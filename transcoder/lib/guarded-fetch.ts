import dns from "node:dns";
import { once } from "node:events";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { EGRESS_REFUSED_HEADER } from "../../shared/egress";
import { AppError, ERROR_STATUS, type ErrorCode } from "../../shared/errors";
import { blockedHost, checkFetchUrl, checkRedirect, isBlockedAddress } from "../../shared/net/url-policy";
import { backoff, retry } from "./retry";

const DEFAULT_MAX_REDIRECTS = 3;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Answers of a proxy or CDN whose origin is briefly away (an edge restarting, a deploy). */
const TRANSIENT_STATUSES = new Set([502, 503, 504]);
/** The connection failed, not the request: reset, refused, cut mid-body, no answer in time. */
const TRANSIENT_CODES = new Set(["ECONNRESET", "ECONNREFUSED", "ECONNABORTED", "EPIPE", "ETIMEDOUT", "EAI_AGAIN", "ERR_STREAM_PREMATURE_CLOSE"]);

/** How a download that failed for a transient reason is tried again (from byte zero). */
export interface DownloadRetry {
  /** Tries in all, the first included. */
  attempts: number;
  /** Wait after the first failed try; doubles per try up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** One try that has no response headers after this long is abandoned and tried again. */
  headersTimeoutMs: number;
}

/**
 * Eight tries with the transcoder's report pacing (0.5 s doubling to 30 s) wait about a minute in
 * all: long enough for an edge that restarts under the download (the local stack's workerd takes
 * seconds on a busy machine), short enough that a dead origin fails its task well inside the
 * 300 s input deadline, which bounds every try anyway.
 */
const DEFAULT_RETRY: DownloadRetry = { attempts: 8, baseDelayMs: 500, maxDelayMs: 30_000, headersTimeoutMs: 30_000 };

/** Resolves a name to every address it has; `dns.lookup` unless a test substitutes one. */
export type Resolver = (hostname: string, callback: (error: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => void;

export interface GuardedFetchOptions {
  /** Test/dev-only hosts that may be private; the caller passes an empty list in production. */
  allowHosts: readonly string[];
  maxBytes: number;
  /** Limit for the whole download: connecting, redirects, headers and body, every try included. */
  timeoutMs: number;
  retry?: Partial<DownloadRetry>;
  maxRedirects?: number;
  /** Aborts the download (the job was canceled); its reason is rethrown as is. */
  signal?: AbortSignal;
  resolve?: Resolver;
  /**
   * `direct` (default): this process connects to the origin itself, so every address a name
   * resolves to is checked here. `container`: inside a Cloudflare Container, whose DNS answers
   * are placeholders (every name is 11.0.0.1 under `wrangler dev`) and whose every connection
   * is handed to the Worker's outbound handler, which checks the real destination and answers
   * a refusal with EGRESS_REFUSED_HEADER. The URL policy applies in both modes.
   */
  egress?: "direct" | "container";
}

export interface Download {
  /** Where the bytes finally came from, after redirects. */
  url: URL;
  bytes: number;
  contentType?: string;
}

const systemResolver: Resolver = (hostname, callback) => dns.lookup(hostname, { all: true, verbatim: true }, callback);

/**
 * Downloads a URL a stranger wrote into `destination`. Every hop passes the shared URL policy
 * (each Location as the server wrote it); every address a name resolves to is checked inside
 * the socket's own lookup, so the address that was checked is the one connected to (a DNS
 * answer cannot change in between). Redirects are followed by hand, size and time are enforced
 * while streaming, and a failed download leaves no file behind. A connection that fails (reset,
 * refused, cut mid-body, no headers in time) or a 502/503/504 is tried again from the start
 * with backoff, within `timeoutMs`; a refusal (policy, size, any other status) never is.
 * Throws an AppError with a URL_* or PAYLOAD_TOO_LARGE code.
 */
export async function downloadToFile(raw: string, destination: string, options: GuardedFetchOptions): Promise<Download> {
  const timeout = AbortSignal.timeout(Math.ceil(options.timeoutMs));
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const container = options.egress === "container";
  const lookup = guardedLookup(options.resolve ?? systemResolver, container ? "any" : options.allowHosts);
  const agents = { http: new http.Agent({ lookup }), https: new https.Agent({ lookup }) };
  const policy = { ...DEFAULT_RETRY, ...options.retry };
  const attempt: Attempt = { raw, destination, options, signal, agents, headersTimeoutMs: policy.headersTimeoutMs };
  let tries = 0;
  try {
    return await retry(
      async (number) => {
        tries = number;
        // Every try starts from byte zero: always correct, where resuming with Range would have to
        // prove through a strong ETag (If-Range) that the object did not change in between.
        await rm(destination, { force: true });
        return await downloadOnce(attempt);
      },
      {
        retryable: (error, number) => error instanceof TransientFailure && !signal.aborted && number < policy.attempts,
        delayMs: (number) => backoff(number, policy.baseDelayMs, policy.maxDelayMs),
        wake: signal,
      },
    );
  } catch (caught) {
    await rm(destination, { force: true });
    if (options.signal?.aborted) throw options.signal.reason;
    const host = attempt.url?.host;
    if (timeout.aborted) throw new AppError("URL_TIMEOUT", `${host ?? "The input"} did not deliver within ${options.timeoutMs / 1000} s.`);
    const error = caught instanceof TransientFailure ? caught.cause : caught;
    const after = tries > 1 ? ` (${tries} tries)` : "";
    if (error instanceof AppError) throw after ? new AppError(error.code, `${error.detail.replace(/\.$/, "")}${after}.`, error.extra) : error;
    // With its cause: a full disk (ENOSPC while writing) is the transcoder's fault, not the URL's.
    throw Object.assign(new AppError("URL_UNREACHABLE", `${host ?? describe(raw)} could not be fetched: ${reason(error)}${after}.`), { cause: error });
  } finally {
    agents.http.destroy();
    agents.https.destroy();
  }
}

/** A failure another try may not meet; `cause` is what to report if none is left. */
class TransientFailure extends Error {
  constructor(override readonly cause: unknown) {
    super("transient download failure");
  }
}

interface Attempt {
  raw: string;
  destination: string;
  options: GuardedFetchOptions;
  signal: AbortSignal;
  agents: { http: http.Agent; https: http.Agent };
  headersTimeoutMs: number;
  /** The URL being fetched, after redirects so far. */
  url?: URL;
}

/** One try: the redirect chain from `raw`, then the body into a fresh file. */
async function downloadOnce(attempt: Attempt): Promise<Download> {
  const { raw, options, signal, agents } = attempt;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  // A wait between tries ends early when the download is aborted: no new connection then.
  signal.throwIfAborted();
  let url = checkFetchUrl(raw, { allowHosts: options.allowHosts });
  for (let hop = 0; ; hop++) {
    attempt.url = url;
    const response = await get(url, url.protocol === "https:" ? agents.https : agents.http, signal, attempt.headersTimeoutMs).catch((error: unknown) => {
      throw classify(error, signal);
    });
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    const refused = options.egress === "container" ? await refusal(response) : undefined;
    if (refused) throw refused;
    if (REDIRECT_STATUSES.has(status) && location) {
      response.resume();
      if (hop >= maxRedirects) throw new AppError("URL_TOO_MANY_REDIRECTS", `More than ${maxRedirects} redirects starting at ${describe(raw)}.`);
      url = checkRedirect(location, url, { allowHosts: options.allowHosts });
      continue;
    }
    if (status !== 200) {
      response.resume();
      const error = new AppError("URL_REMOTE_STATUS", `${url.host} answered ${status} for ${describe(url.toString())}.`);
      throw TRANSIENT_STATUSES.has(status) ? new TransientFailure(error) : error;
    }
    const declared = Number(response.headers["content-length"]);
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      response.resume();
      throw tooLarge(options.maxBytes);
    }
    const bytes = await save(response, attempt.destination, options.maxBytes, signal).catch((error: unknown) => {
      throw classify(error, signal);
    });
    return { url, bytes, contentType: response.headers["content-type"] };
  }
}

/** `error`, marked as worth another try when the connection itself failed (never a refusal or the caller's abort). */
function classify(error: unknown, signal: AbortSignal): unknown {
  if (error instanceof TransientFailure || signal.aborted) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" && TRANSIENT_CODES.has(code) ? new TransientFailure(error) : error;
}

/** The outbound handler's refusal of a request (a problem+json), as the error it stands for. */
async function refusal(response: http.IncomingMessage): Promise<AppError | undefined> {
  const code = response.headers[EGRESS_REFUSED_HEADER];
  if (typeof code !== "string") return undefined;
  let text = "";
  for await (const chunk of response) if (text.length < 8192) text += String(chunk);
  let detail: unknown;
  try {
    detail = (JSON.parse(text) as { detail?: unknown }).detail;
  } catch {
    detail = undefined;
  }
  const known = Object.hasOwn(ERROR_STATUS, code) ? (code as ErrorCode) : "URL_UNREACHABLE";
  return new AppError(known, typeof detail === "string" ? detail.slice(0, 500) : `The request was refused on its way out (${code.slice(0, 64)}).`);
}

/**
 * A socket lookup that refuses names with any non-public address, unless the name is
 * allow-listed or every address is accepted (`"any"`: container egress, where the answers are
 * the platform's placeholders and the Worker checks the real destination).
 */
export function guardedLookup(resolve: Resolver, allowHosts: readonly string[] | "any"): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, (error, found) => {
      if (error) return callback(error, "", 0);
      const addresses = options.family === 4 || options.family === 6 ? found.filter((entry) => entry.family === options.family) : found;
      const allowed = allowHosts === "any" || allowHosts.includes(hostname.toLowerCase().replace(/\.$/, ""));
      // Every answer is checked, not only the first: with happy eyeballs any of them may be dialled.
      if (!allowed && addresses.some((entry) => isBlockedAddress(entry.address))) return callback(blockedHost(hostname), "", 0);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
      if (options.all) return callback(null, addresses);
      callback(null, first.address, first.family);
    });
  };
}

function get(url: URL, agent: http.Agent, signal: AbortSignal, headersTimeoutMs: number): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === "https:" ? https : http;
    // identity: the size limit must count the bytes that end up on disk.
    const request = client.request(url, { method: "GET", agent, signal, headers: { "user-agent": "ffedge-transcoder", accept: "*/*", "accept-encoding": "identity" } }, (response) => {
      clearTimeout(timer);
      resolve(response);
    });
    const timer = setTimeout(() => {
      request.destroy(Object.assign(new Error(`no response headers within ${headersTimeoutMs / 1000} s`), { code: "ETIMEDOUT" }));
    }, headersTimeoutMs);
    request.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end();
  });
}

async function save(body: http.IncomingMessage, destination: string, maxBytes: number, signal: AbortSignal): Promise<number> {
  let bytes = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      callback(bytes > maxBytes ? tooLarge(maxBytes) : null, chunk);
    },
  });
  const file = createWriteStream(destination, { flags: "wx", mode: 0o644 });
  try {
    await pipeline(body, limit, file, { signal });
  } catch (error) {
    // The caller removes the partial file on failure; make sure the stream has opened and
    // closed it first, so no open() still in flight can recreate it after that rm().
    if (!file.closed) await once(file, "close").catch(() => undefined);
    throw error;
  }
  // A body cut short by the server (fewer bytes than its Content-Length) is not a download.
  if (!body.complete) throw new TransientFailure(new AppError("URL_UNREACHABLE", "The connection closed before the whole body arrived."));
  return bytes;
}

function tooLarge(maxBytes: number): AppError {
  return new AppError("PAYLOAD_TOO_LARGE", `The input is larger than the limit of ${maxBytes} bytes.`);
}

/** A URL as it may appear in messages: without query or fragment, which can carry signatures. */
export function describe(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`.slice(0, 300);
  } catch {
    return "the input URL";
  }
}

/** What Node's error codes for a failed connection mean, in words a user can act on. */
const CONNECTION_WORDS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "the connection was reset",
  ECONNABORTED: "the connection broke off",
  EPIPE: "the connection broke off",
  ERR_STREAM_PREMATURE_CLOSE: "the connection closed before the whole body arrived",
  ENOTFOUND: "the name does not resolve",
  EAI_AGAIN: "the name could not be resolved (DNS did not answer)",
  EHOSTUNREACH: "no route to the host",
  ENETUNREACH: "no route to the host",
};

function reason(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code && CONNECTION_WORDS[code]) return CONNECTION_WORDS[code];
    if (code === "ETIMEDOUT") return error.message.startsWith("no response") ? error.message : "the connection timed out";
    // Certificate and handshake failures: Node's message says which ("self-signed certificate", ...).
    if (code && /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_)/.test(code)) return `the TLS handshake failed: ${error.message}`;
    return code ? `${code}` : error.message;
  }
  return String(error);
}
