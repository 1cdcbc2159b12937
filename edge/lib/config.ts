import type { MiddlewareHandler } from "hono";
import { AppError } from "../../shared/errors";
import { parseMailFrom } from "./mail-from";

/** Typed view of the string vars in wrangler.toml, with the defaults the service documents. */
export function config(env: Env) {
  const maxUploadBytes = positiveInt(env.MAX_UPLOAD_BYTES, 1024 ** 3);
  return {
    production: env.ENVIRONMENT === "production",
    publicUrl: trimSlash(env.PUBLIC_URL),
    cnPublicUrl: trimSlash(env.CN_PUBLIC_URL || env.PUBLIC_URL),
    edgeUrl: trimSlash(env.EDGE_URL),
    fileTtlSeconds: positiveInt(env.FILE_TTL_SECONDS, 86_400),
    maxUploadBytes,
    /**
     * The largest request body the platform lets through to the Worker: Cloudflare answers its
     * own 413 above 100 MB (Free, Pro), 200 MB (Business), 500 MB (Enterprise), before the
     * Worker runs (https://developers.cloudflare.com/workers/platform/limits/#request-limits).
     * Unset (locally), a body may carry a MAX_UPLOAD_BYTES file plus a 64 KiB multipart envelope.
     */
    maxRequestBodyBytes: positiveInt(env.MAX_REQUEST_BODY_BYTES, maxUploadBytes + REQUEST_ENVELOPE_BYTES),
    taskTimeoutSeconds: positiveInt(env.TASK_TIMEOUT_SECONDS, 600),
    /** A running task whose transcoder has not reported for this long is failed (it heartbeats every 10 s). */
    heartbeatTimeoutSeconds: positiveInt(env.HEARTBEAT_TIMEOUT_SECONDS, 60),
    /** One webhook attempt may take this long; never more than 15 s, whatever the var says. */
    webhookTimeoutSeconds: Math.min(15, positiveInt(env.WEBHOOK_TIMEOUT_SECONDS, 15)),
    /** Delay before each webhook retry; the last one repeats until 24 h have passed since the first attempt. */
    webhookRetryScheduleSeconds: positiveIntList(env.WEBHOOK_RETRY_SCHEDULE_SECONDS, [5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800]),
    maxRunningTasksPerUser: positiveInt(env.MAX_RUNNING_TASKS_PER_USER, 5),
    /** A URL upload whose origin sends nothing for this long fails UPLOAD_SOURCE_STALLED (504), however large the file. */
    urlUploadIdleTimeoutSeconds: positiveInt(env.URL_UPLOAD_IDLE_TIMEOUT_SECONDS, 30),
    /** Processing seconds a user may use per UTC day: GET /v1/me's remaining_credits. */
    dailyTaskSeconds: positiveInt(env.DAILY_TASK_SECONDS, 36_000),
    /** GET /v1/tasks/{task_id} answers without a key (FFHub's clients poll it so); "false" turns that off. */
    publicTaskStatus: env.PUBLIC_TASK_STATUS !== "false",
    /** Lifetime of a console session from sign-in. */
    sessionTtlSeconds: positiveInt(env.SESSION_TTL_SECONDS, 14 * 24 * 60 * 60),
    /** The most TranscoderContainers at once: wrangler.toml's `max_instances`, which the container pool counts against. */
    containerMaxInstances: positiveInt(env.CONTAINER_MAX_INSTANCES, 20),
    /** Pre-started, never-used containers the pool keeps, so a short task does not wait for a cold start (0: none). */
    warmContainers: nonNegativeInt(env.WARM_CONTAINERS, 0),
    /** Hosts the guarded fetcher may reach although private: never honoured in production. */
    devFetchAllowHosts:
      env.ENVIRONMENT === "production"
        ? []
        : (env.DEV_FETCH_ALLOW_HOSTS ?? "").split(",").map((host) => host.trim().toLowerCase()).filter(Boolean),
  };
}

/** A multipart body's boundaries and part headers on top of the file itself. */
export const REQUEST_ENVELOPE_BYTES = 64 * 1024;

function positiveInt(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return Number.isSafeInteger(parsed) && parsed > 0 ? parsed : fallback;
}

function nonNegativeInt(value: string | undefined, fallback: number): number {
  const parsed = Number(value);
  return value !== undefined && value.trim() !== "" && Number.isSafeInteger(parsed) && parsed >= 0 ? parsed : fallback;
}

function positiveIntList(value: string | undefined, fallback: number[]): number[] {
  const parsed = (value ?? "").split(",").map((item) => Number(item.trim()));
  return parsed.length > 0 && parsed.every((item) => Number.isSafeInteger(item) && item > 0) ? parsed : fallback;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

/** One setting a production deployment cannot run with, and why. */
export interface ConfigProblem {
  setting: string;
  problem: string;
}

const MIN_SECRET_LENGTH = 32;
/** Hosts that only ever appear in examples (RFC 2606 and the placeholders wrangler.toml ships). */
const PLACEHOLDER_HOST = /(^|\.)(example\.(com|net|org|cn)|example|test|invalid|localhost)$/;
const PLACEHOLDER_D1_IDS = new Set(["00000000-0000-0000-0000-000000000000"]);

/**
 * What a production deployment lacks, checked at every request so it fails loudly instead of
 * running on development defaults. Development and tests (ENVIRONMENT other than
 * "production") keep their defaults and get no problems.
 */
export function configProblems(env: Env): ConfigProblem[] {
  if (env.ENVIRONMENT !== "production") return [];
  const problems: ConfigProblem[] = [];
  for (const setting of ["TRANSCODER_SECRET", "SIGNING_SECRET"] as const) {
    const value = env[setting] ?? "";
    if (value.length < MIN_SECRET_LENGTH) problems.push({ setting, problem: `must be a secret of at least ${MIN_SECRET_LENGTH} characters (wrangler secret put ${setting} --env production)` });
  }
  // The Worker cannot read its D1 binding's id; the runbook sets this var to the same id.
  const d1Id = env.D1_DATABASE_ID ?? "";
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(d1Id) || PLACEHOLDER_D1_IDS.has(d1Id)) {
    problems.push({ setting: "D1_DATABASE_ID", problem: "must be the id of the production D1 database (wrangler d1 create ffedge), as in its d1_databases entry" });
  }
  for (const setting of ["R2_ACCOUNT_ID", "R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY"] as const) {
    if (!env[setting]) problems.push({ setting, problem: "is required for presigned uploads straight to R2 (an R2 API token with Object Read & Write)" });
  }
  const hosts: Partial<Record<"PUBLIC_URL" | "CN_PUBLIC_URL" | "EDGE_URL", string>> = {};
  for (const setting of ["PUBLIC_URL", "CN_PUBLIC_URL", "EDGE_URL"] as const) {
    const url = parseUrl(env[setting]);
    if (!url || url.protocol !== "https:" || PLACEHOLDER_HOST.test(url.hostname) || /^[\d.]+$|^\[/.test(url.hostname)) {
      problems.push({ setting, problem: "must be the https URL of your own hostname, not a placeholder" });
    } else {
      hosts[setting] = url.hostname;
    }
  }
  // User content must never share an origin with the API (or the console it serves).
  for (const setting of ["PUBLIC_URL", "CN_PUBLIC_URL"] as const) {
    if (hosts[setting] && hosts[setting] === hosts.EDGE_URL) {
      problems.push({ setting, problem: "must be a hostname of its own: the CDN serves user content, which must never share the API's origin" });
    }
  }
  // Email Service sends only from a domain onboarded to it, so a placeholder fails every mail:
  // https://developers.cloudflare.com/email-service/get-started/send-emails/
  const sender = parseMailFrom(env.MAIL_FROM);
  if (!sender || PLACEHOLDER_HOST.test(sender.domain)) {
    problems.push({ setting: "MAIL_FROM", problem: 'must be "Name <address@your-domain>" or a bare address, on your own domain onboarded to Cloudflare Email Service, not a placeholder' });
  }
  return problems;
}

const reported = new Set<string>();

/** Throws CONFIG_INVALID (500) while the deployment is misconfigured; logs each problem once per isolate, naming the setting. */
export function assertValidConfig(env: Env): void {
  const problems = configProblems(env);
  if (problems.length === 0) return;
  for (const { setting, problem } of problems) {
    const line = JSON.stringify({ msg: "configuration invalid", setting, problem });
    if (!reported.has(line)) console.error(line);
    reported.add(line);
  }
  throw new AppError("CONFIG_INVALID", "The service is not configured correctly; its log names the setting to fix.");
}

/** Every request: a misconfigured production deployment answers CONFIG_INVALID rather than running on defaults. */
export const requireValidConfig: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  assertValidConfig(c.env);
  await next();
};

function parseUrl(value: string | undefined): URL | undefined {
  try {
    return new URL(value ?? "");
  } catch {
    return undefined;
  }
}
