import type { MiddlewareHandler } from "hono";
import { z } from "zod";
import { AppError } from "../../shared/errors";
import { log } from "./log";
import { parseMailFrom } from "./mail-from";

/** A multipart body's boundaries and part headers on top of the file itself. */
export const REQUEST_ENVELOPE_BYTES = 64 * 1024;

const WHOLE_ABOVE_ZERO = "must be a whole number above 0";
const wholeNumber = (min: 0 | 1, error = min === 0 ? "must be a whole number, 0 or more" : WHOLE_ABOVE_ZERO) =>
  z.coerce.number({ error }).int({ error }).min(min, { error });
const count = (fallback: number) => wholeNumber(1).default(fallback);
const httpUrl = z.string().refine(isHttpUrl, { error: "must be an http(s) URL" });

/**
 * The string vars of wrangler.toml and the secrets (edge/secrets.d.ts), with the defaults the
 * service documents. A value that does not parse is refused, never replaced by its default.
 */
const SettingsSchema = z.object({
  ENVIRONMENT: z.enum(["development", "production"], { error: 'must be "development" or "production"' }).default("development"),
  PUBLIC_URL: httpUrl,
  CN_PUBLIC_URL: httpUrl.optional(),
  EDGE_URL: httpUrl,
  TRANSCODER_URL: z
    .string()
    .default("")
    .refine((list) => splitList(list).every(isHttpUrl), { error: "must be comma-separated http(s) URLs of transcoders, or empty for Containers" }),
  FILE_TTL_SECONDS: count(86_400),
  MAX_UPLOAD_BYTES: count(1024 ** 3),
  MAX_REQUEST_BODY_BYTES: wholeNumber(1).optional(),
  TASK_TIMEOUT_SECONDS: count(600),
  HEARTBEAT_TIMEOUT_SECONDS: count(60),
  WEBHOOK_TIMEOUT_SECONDS: count(15),
  WEBHOOK_RETRY_SCHEDULE_SECONDS: z
    .string()
    .default("5,30,120,600,1800,3600,7200,14400,28800")
    .transform((list) => list.split(",").map((item) => Number(item.trim())))
    .refine((delays) => delays.every((delay) => Number.isSafeInteger(delay) && delay > 0), { error: "must be comma-separated whole numbers of seconds above 0" }),
  DESTINATION_RETRY_SCHEDULE_SECONDS: z
    .string()
    .default("30,120,600,1800")
    .transform((list) => list.split(",").map((item) => Number(item.trim())))
    .refine((delays) => delays.every((delay) => Number.isSafeInteger(delay) && delay > 0), { error: "must be comma-separated whole numbers of seconds above 0" }),
  MAX_RUNNING_TASKS_PER_USER: count(5),
  RATE_LIMIT_REQUESTS: count(1200),
  RATE_LIMIT_PERIOD_SECONDS: count(60),
  URL_UPLOAD_IDLE_TIMEOUT_SECONDS: count(30),
  DAILY_TASK_SECONDS: count(36_000),
  PUBLIC_TASK_STATUS: z.enum(["true", "false"], { error: 'must be "true" or "false"' }).default("true"),
  SESSION_TTL_SECONDS: count(14 * 24 * 60 * 60),
  CONTAINER_MAX_INSTANCES: count(20),
  WARM_CONTAINERS: wholeNumber(0).default(0),
  DEV_FETCH_ALLOW_HOSTS: z.string().default(""),
  // Read elsewhere as they are; only a production deployment requires them (productionReadiness).
  TRANSCODER_SECRET: z.string().optional(),
  SIGNING_SECRET: z.string().optional(),
  D1_DATABASE_ID: z.string().optional(),
  R2_ACCOUNT_ID: z.string().optional(),
  R2_ACCESS_KEY_ID: z.string().optional(),
  R2_SECRET_ACCESS_KEY: z.string().optional(),
  MAIL_FROM: z.string().optional(),
});

type Settings = z.infer<typeof SettingsSchema>;

/** Typed view of the settings, as the rest of the Worker reads them. Frozen: one object serves every request of the isolate. */
function toConfig(settings: Settings) {
  const production = settings.ENVIRONMENT === "production";
  const publicUrl = trimSlash(settings.PUBLIC_URL);
  return Object.freeze({
    production,
    publicUrl,
    cnPublicUrl: settings.CN_PUBLIC_URL === undefined ? publicUrl : trimSlash(settings.CN_PUBLIC_URL),
    edgeUrl: trimSlash(settings.EDGE_URL),
    /** Transcoders this deployment dispatches to; empty: one Cloudflare Container per task. */
    transcoderUrls: Object.freeze(splitList(settings.TRANSCODER_URL).map(trimSlash)),
    fileTtlSeconds: settings.FILE_TTL_SECONDS,
    maxUploadBytes: settings.MAX_UPLOAD_BYTES,
    /**
     * The largest request body the platform lets through to the Worker: Cloudflare answers its
     * own 413 above 100 MB (Free, Pro), 200 MB (Business), 500 MB (Enterprise), before the
     * Worker runs (https://developers.cloudflare.com/workers/platform/limits/#request-limits).
     * Unset (locally), a body may carry a MAX_UPLOAD_BYTES file plus a 64 KiB multipart envelope.
     */
    maxRequestBodyBytes: settings.MAX_REQUEST_BODY_BYTES ?? settings.MAX_UPLOAD_BYTES + REQUEST_ENVELOPE_BYTES,
    taskTimeoutSeconds: settings.TASK_TIMEOUT_SECONDS,
    /** A running task whose transcoder has not reported for this long is failed (it heartbeats every 10 s). */
    heartbeatTimeoutSeconds: settings.HEARTBEAT_TIMEOUT_SECONDS,
    /** One webhook attempt may take this long; never more than 15 s, whatever the var says. */
    webhookTimeoutSeconds: Math.min(15, settings.WEBHOOK_TIMEOUT_SECONDS),
    /** Delay before each webhook retry; the last one repeats until 24 h have passed since the first attempt. */
    webhookRetryScheduleSeconds: Object.freeze(settings.WEBHOOK_RETRY_SCHEDULE_SECONDS),
    /** Pause after each failed delivery of an output to a destination; one attempt more than pauses, then it is `failed`. */
    destinationRetryScheduleSeconds: Object.freeze(settings.DESTINATION_RETRY_SCHEDULE_SECONDS),
    maxRunningTasksPerUser: settings.MAX_RUNNING_TASKS_PER_USER,
    /** What GET /v1/me advertises; the API_RATE_LIMIT binding enforces its own copy of these numbers. */
    rateLimit: Object.freeze({ requests: settings.RATE_LIMIT_REQUESTS, periodSeconds: settings.RATE_LIMIT_PERIOD_SECONDS }),
    /** A URL upload whose origin sends nothing for this long fails UPLOAD_SOURCE_STALLED (504), however large the file. */
    urlUploadIdleTimeoutSeconds: settings.URL_UPLOAD_IDLE_TIMEOUT_SECONDS,
    /** Processing seconds a user may use per UTC day: GET /v1/me's remaining_credits. */
    dailyTaskSeconds: settings.DAILY_TASK_SECONDS,
    /** GET /v1/tasks/{task_id} answers without a key (FFHub's clients poll it so); "false" turns that off. */
    publicTaskStatus: settings.PUBLIC_TASK_STATUS === "true",
    /** Lifetime of a console session from sign-in. */
    sessionTtlSeconds: settings.SESSION_TTL_SECONDS,
    /** The most TranscoderContainers at once: wrangler.toml's `max_instances`, which the container pool counts against. */
    containerMaxInstances: settings.CONTAINER_MAX_INSTANCES,
    /** Pre-started, never-used containers the pool keeps, so a short task does not wait for a cold start (0: none). */
    warmContainers: settings.WARM_CONTAINERS,
    /** Hosts the guarded fetcher may reach although private: never honoured in production. */
    devFetchAllowHosts: Object.freeze(production ? [] : splitList(settings.DEV_FETCH_ALLOW_HOSTS).map((host) => host.toLowerCase())),
  });
}

export type EdgeConfig = ReturnType<typeof toConfig>;

/** One setting a deployment cannot run with, and why. */
export interface ConfigProblem {
  setting: string;
  problem: string;
}

const MIN_SECRET_LENGTH = 32;
/** Hosts that only ever appear in examples (RFC 2606 and the placeholders wrangler.toml ships). */
const PLACEHOLDER_HOST = /(^|\.)(example\.(com|net|org|cn)|example|test|invalid|localhost)$/;
const PLACEHOLDER_D1_IDS = new Set(["00000000-0000-0000-0000-000000000000"]);

/**
 * What a production deployment needs beyond well-formed values, so it fails loudly instead of
 * running on development defaults. Development and tests keep their defaults.
 */
function productionReadiness(settings: Settings, context: z.RefinementCtx<Settings>): void {
  if (settings.ENVIRONMENT !== "production") return;
  const problem = (setting: keyof Settings, message: string) => context.addIssue({ code: "custom", path: [setting], message });
  for (const setting of ["TRANSCODER_SECRET", "SIGNING_SECRET"] as const) {
    if ((settings[setting] ?? "").length < MIN_SECRET_LENGTH) problem(setting, `must be a secret of at least ${MIN_SECRET_LENGTH} characters (wrangler secret put ${setting} --env production)`);
  }
  // The Worker cannot read its D1 binding's id; the runbook sets this var to the same id.
  const d1Id = settings.D1_DATABASE_ID ?? "";
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(d1Id) || PLACEHOLDER_D1_IDS.has(d1Id)) {
    problem("D1_DATABASE_ID", "must be the id of the production D1 database (wrangler d1 create ffedge), as in its d1_databases entry");
  }
  for (const setting of ["R2_ACCOUNT_ID", "R2_ACCESS_KEY_ID", "R2_SECRET_ACCESS_KEY"] as const) {
    if (!settings[setting]) problem(setting, "is required for presigned uploads straight to R2 (an R2 API token with Object Read & Write)");
  }
  const hosts: Partial<Record<"PUBLIC_URL" | "CN_PUBLIC_URL" | "EDGE_URL", string>> = {};
  for (const setting of ["PUBLIC_URL", "CN_PUBLIC_URL", "EDGE_URL"] as const) {
    const url = parseUrl(settings[setting]);
    if (!url || url.protocol !== "https:" || PLACEHOLDER_HOST.test(url.hostname) || /^[\d.]+$|^\[/.test(url.hostname)) {
      problem(setting, "must be the https URL of your own hostname, not a placeholder");
    } else {
      hosts[setting] = url.hostname;
    }
  }
  // User content must never share an origin with the API (or the console it serves).
  for (const setting of ["PUBLIC_URL", "CN_PUBLIC_URL"] as const) {
    if (hosts[setting] && hosts[setting] === hosts.EDGE_URL) {
      problem(setting, "must be a hostname of its own: the CDN serves user content, which must never share the API's origin");
    }
  }
  // Email Service sends only from a domain onboarded to it, so a placeholder fails every mail:
  // https://developers.cloudflare.com/email-service/get-started/send-emails/
  const sender = parseMailFrom(settings.MAIL_FROM);
  if (!sender || PLACEHOLDER_HOST.test(sender.domain)) {
    problem("MAIL_FROM", 'must be "Name <address@your-domain>" or a bare address, on your own domain onboarded to Cloudflare Email Service, not a placeholder');
  }
}

// zod runs this refinement only once every value parsed, so a deployment learns of malformed
// values first and of what production lacks after.
const DeploymentSchema = SettingsSchema.superRefine(productionReadiness);

interface Parsed {
  config?: EdgeConfig;
  problems: readonly ConfigProblem[];
}

// The env object lives as long as its isolate (or Durable Object), so each is parsed once;
// tests that build their own env get theirs parsed on its own.
const parsedByEnv = new WeakMap<Env, Parsed>();

function parsed(env: Env): Parsed {
  let entry = parsedByEnv.get(env);
  if (!entry) {
    entry = parse(env);
    parsedByEnv.set(env, entry);
  }
  return entry;
}

function parse(env: Env): Parsed {
  // An empty var means "not set", as for the transcoder; bindings other than these are not read.
  const values = env as unknown as Record<string, unknown>;
  const input = Object.fromEntries(
    Object.keys(SettingsSchema.shape)
      .map((setting) => [setting, values[setting]] as const)
      .filter(([, value]) => value !== undefined && !(typeof value === "string" && value.trim() === "")),
  );
  const settings = SettingsSchema.safeParse(input);
  if (!settings.success) return { problems: problemsOf(settings.error) };
  const deployment = DeploymentSchema.safeParse(input);
  return { config: toConfig(settings.data), problems: deployment.success ? [] : problemsOf(deployment.error) };
}

/** One problem per setting: the first thing wrong with it. */
function problemsOf(error: z.ZodError): ConfigProblem[] {
  const bySetting = new Map<string, string>();
  for (const issue of error.issues) {
    const setting = String(issue.path[0] ?? "environment");
    if (!bySetting.has(setting)) bySetting.set(setting, issue.message);
  }
  return [...bySetting].map(([setting, problem]) => ({ setting, problem }));
}

/**
 * The settings of this Worker, parsed once per env object. Throws CONFIG_INVALID (500) when a
 * value does not parse, wherever it is first read (a request, the queue, an alarm).
 */
export function config(env: Env): EdgeConfig {
  const { config: settings, problems } = parsed(env);
  if (!settings) refuse(problems);
  return settings;
}

/** Everything wrong with the configuration: malformed values, and in production whatever it lacks. */
export function configProblems(env: Env): ConfigProblem[] {
  return [...parsed(env).problems];
}

const reported = new Set<string>();

/** Logs each problem once per isolate, naming the setting; the client learns only that the service is misconfigured. */
function refuse(problems: readonly ConfigProblem[]): never {
  for (const { setting, problem } of problems) {
    const key = `${setting}\n${problem}`;
    if (!reported.has(key)) log.error("configuration invalid", { setting, problem });
    reported.add(key);
  }
  throw new AppError("CONFIG_INVALID", "The service is not configured correctly; its log names the setting to fix.");
}

/** Throws CONFIG_INVALID (500) while the deployment is misconfigured. */
export function assertValidConfig(env: Env): void {
  const { problems } = parsed(env);
  if (problems.length > 0) refuse(problems);
}

/** Every request: a misconfigured Worker answers CONFIG_INVALID rather than running on defaults. */
export const requireValidConfig: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  assertValidConfig(c.env);
  await next();
};

function splitList(value: string): string[] {
  return value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

function parseUrl(value: string | undefined): URL | undefined {
  try {
    return new URL(value ?? "");
  } catch {
    return undefined;
  }
}

function isHttpUrl(value: string): boolean {
  const protocol = parseUrl(value)?.protocol;
  return protocol === "http:" || protocol === "https:";
}
