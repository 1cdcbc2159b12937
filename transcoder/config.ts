import { accessSync, constants } from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { CONTAINER_EDGE_HOST } from "../shared/egress";
import { ISOLATION_LAYERS, type IsolationLayer } from "./sandbox/requirements";

const GiB = 1024 ** 3;

const count = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const bytes = count;
const seconds = count;

/** The environment the transcoder reads, with the defaults it documents. */
const EnvSchema = z
  .object({
    NODE_ENV: z.enum(["development", "test", "production"]).default("development"),
    PORT: z.coerce.number().int().min(0).max(65_535).default(8788),
    HOST: z.string().min(1).default("127.0.0.1"),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    TRANSCODER_SECRET: z.string({ error: "TRANSCODER_SECRET is required: the shared secret the edge presents on POST /jobs." }).min(1),
    FFMPEG_PATH: z.string().min(1).default("ffmpeg"),
    FFPROBE_PATH: z.string().min(1).default("ffprobe"),
    WORK_ROOT: z.string().refine(path.isAbsolute, "WORK_ROOT must be an absolute path.").default(path.join(os.tmpdir(), "ffedge-jobs")),
    /** Below this much free space in WORK_ROOT, `/health` answers 503 `degraded` and says why. */
    MIN_FREE_WORK_BYTES: bytes(256 * 1024 ** 2),
    /**
     * After a job here ran out of work space, new jobs are refused (503) this long, so a task too
     * big for the free space is not handed back and taken again at once, spending its hand-backs.
     */
    WORKSPACE_FULL_COOLDOWN_SECONDS: seconds(60),
    /**
     * Echoed on `/health` so a supervisor can tell its own transcoder from another program on
     * the port (`npm start` sets a random one). Not a secret.
     */
    TRANSCODER_INSTANCE: z.string().max(128).optional(),
    /** ffmpeg processes at once: CPU-bound, so one per core by default. */
    MAX_CONCURRENT_JOBS: count(os.availableParallelism()),
    /**
     * Jobs accepted beyond that, which download, probe and upload while the ffmpeg slots are
     * busy, so the CPU never idles through a job's I/O. Default: as many as MAX_CONCURRENT_JOBS.
     */
    MAX_QUEUED_JOBS: z.coerce.number().int().nonnegative().optional(),
    MAX_INPUT_BYTES: bytes(GiB),
    /** Width × height above which a video input is refused as a decompression bomb (8K is 33 MP). */
    MAX_INPUT_PIXELS: count(8192 * 8192),
    MAX_OUTPUT_FILES: count(1000),
    MAX_OUTPUT_BYTES: bytes(2 * GiB),
    /** Address-space cap of each ffmpeg/ffprobe process. */
    MAX_MEMORY_BYTES: bytes(4 * GiB),
    /** Upper bound on a job's wall-clock time; a job's own `timeout_seconds` applies when smaller. */
    DEFAULT_TIMEOUT_SECONDS: seconds(600),
    DOWNLOAD_TIMEOUT_SECONDS: seconds(300),
    /** A running ffmpeg whose output time, frame count and size stay still this long is stopped (STALLED). */
    STALL_SECONDS: seconds(60),
    /**
     * How long a finished job keeps trying to hand its outputs and terminal report to the edge
     * (an edge outage of up to this long loses no finished work).
     */
    EDGE_RETRY_SECONDS: seconds(600),
    /**
     * How long SIGTERM lets running jobs finish (and report) before the rest are handed back.
     * A Container gets SIGKILL 15 minutes after SIGTERM, so the edge passes at most 870 s there
     * (https://developers.cloudflare.com/containers/platform-details/rollouts/). The cap keeps
     * the wait inside what one Node.js timer can hold (a longer one would fire at once).
     */
    SHUTDOWN_GRACE_SECONDS: z.coerce.number().int().nonnegative().max(86_400).default(120),
    DEV_FETCH_ALLOW_HOSTS: z.string().default(""),
    SANDBOX: z.enum(["auto", "off"]).default("auto"),
    /**
     * Under EGRESS=container the transcoder refuses to start without each isolation layer that
     * keeps ffmpeg from the server's secrets, other jobs' files and the network
     * (sandbox/requirements.ts). This names, comma-separated, exactly the layers the operator
     * accepts to run without, e.g. `network_namespace,job_root` where the runtime's seccomp
     * forbids `unshare` (Docker's default profile, `wrangler dev`).
     */
    SANDBOX_ALLOW_MISSING: z
      .string()
      .default("")
      .transform((list) => list.split(",").map((name) => name.trim()).filter(Boolean))
      .pipe(z.array(z.enum(ISOLATION_LAYERS, { error: (issue) => `SANDBOX_ALLOW_MISSING names '${String(issue.input)}', which is not an isolation layer (${ISOLATION_LAYERS.join(", ")}).` }))),
    /**
     * `container`: the transcoder runs in a Cloudflare Container, where the Worker's outbound
     * handler checks the destination of every request (DNS answers inside are placeholders).
     * Set by TranscoderContainer (edge/dispatch/transcoder-container.ts), nowhere else.
     */
    EGRESS: z.enum(["direct", "container"]).default("direct"),
    NODE_EXTRA_CA_CERTS: z.string().optional(),
  })
  .superRefine((env, context) => {
    // Container egress turns off this process's own address checks, so it must really be a
    // container whose HTTPS the platform intercepts: one that was given the platform's CA.
    if (env.EGRESS === "container") {
      const ca = env.NODE_EXTRA_CA_CERTS;
      if (!ca || !readable(ca)) {
        context.addIssue({ code: "custom", path: ["EGRESS"], message: "EGRESS=container needs NODE_EXTRA_CA_CERTS naming the readable CA certificate of the container platform's HTTPS interception." });
      }
    }
    // Elsewhere the sandbox is best effort (reported on /health), so an allowance would be a no-op that reads like a setting.
    if (env.EGRESS !== "container" && env.SANDBOX_ALLOW_MISSING.length > 0) {
      context.addIssue({ code: "custom", path: ["SANDBOX_ALLOW_MISSING"], message: "SANDBOX_ALLOW_MISSING applies only with EGRESS=container, where missing isolation layers stop the start." });
    }
    if (env.NODE_ENV === "production" && env.TRANSCODER_SECRET.length < 16) {
      context.addIssue({ code: "custom", path: ["TRANSCODER_SECRET"], message: "TRANSCODER_SECRET must be at least 16 characters in production." });
    }
  });

/** Pacing of reports and retries. Not read from the environment: tests shorten them. */
export interface Timings {
  /** The first report waits this long: a job that ends sooner sends its terminal report alone. */
  firstReportMs: number;
  /** Progress reports are sent at most this often. */
  progressIntervalMs: number;
  /** A report is sent at least this often while a job runs, even without progress. */
  heartbeatMs: number;
  /** Timeout of one callback request to the edge. */
  callbackTimeoutMs: number;
  /** First retry delay of a failed report; doubles on every try. */
  retryBaseMs: number;
  retryMaxDelayMs: number;
  /** A progress report that cannot be delivered for this long is dropped. */
  progressGiveUpMs: number;
  /** The terminal report is retried this long before the transcoder gives up on it. */
  terminalGiveUpMs: number;
  /** Wall-clock limit of one ffprobe run. */
  probeTimeoutMs: number;
}

export interface TranscoderConfig {
  production: boolean;
  port: number;
  host: string;
  logLevel: string;
  transcoderSecret: string;
  ffmpegPath: string;
  ffprobePath: string;
  workRoot: string;
  minFreeWorkBytes: number;
  workspaceFullCooldownMs: number;
  instance?: string;
  maxConcurrentJobs: number;
  maxQueuedJobs: number;
  maxInputBytes: number;
  maxInputPixels: number;
  maxOutputFiles: number;
  maxOutputBytes: number;
  maxMemoryBytes: number;
  maxJobSeconds: number;
  downloadTimeoutSeconds: number;
  stallSeconds: number;
  shutdownGraceSeconds: number;
  /** Hosts the input fetcher may reach although they are private. Always empty in production. */
  devFetchAllowHosts: string[];
  sandbox: "auto" | "off";
  /** Required isolation layers the operator lets the transcoder start without (EGRESS=container only). */
  sandboxAllowMissing: IsolationLayer[];
  /** Who checks where input downloads go: this process (`direct`) or the container platform's Worker (`container`). */
  egress: "direct" | "container";
  timings: Timings;
}

export const DEFAULT_TIMINGS: Timings = {
  // Far inside the edge's first check on a dispatched job (PROBE_AFTER_MS, 15 s).
  firstReportMs: 1_000,
  // ffmpeg writes progress every 0.5 s: every line goes out as it comes (issue 12: ≤ 250 ms to SSE).
  progressIntervalMs: 250,
  heartbeatMs: 10_000,
  callbackTimeoutMs: 15_000,
  retryBaseMs: 500,
  retryMaxDelayMs: 30_000,
  progressGiveUpMs: 60_000,
  terminalGiveUpMs: 10 * 60_000,
  probeTimeoutMs: 30_000,
};

export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid transcoder configuration:\n${issues.map((issue) => `  - ${issue}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

function readable(file: string): boolean {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** Reads and validates the configuration; throws a ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): TranscoderConfig {
  // An empty variable means "not set", as in most deployment tools.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value !== ""));
  const result = EnvSchema.safeParse(present);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join(".") || "environment"}: ${issue.message}`));
  }
  const parsed = result.data;
  const production = parsed.NODE_ENV === "production";
  return {
    production,
    port: parsed.PORT,
    host: parsed.HOST,
    logLevel: parsed.LOG_LEVEL,
    transcoderSecret: parsed.TRANSCODER_SECRET,
    ffmpegPath: parsed.FFMPEG_PATH,
    ffprobePath: parsed.FFPROBE_PATH,
    workRoot: path.resolve(parsed.WORK_ROOT),
    minFreeWorkBytes: parsed.MIN_FREE_WORK_BYTES,
    workspaceFullCooldownMs: parsed.WORKSPACE_FULL_COOLDOWN_SECONDS * 1000,
    ...(parsed.TRANSCODER_INSTANCE === undefined ? {} : { instance: parsed.TRANSCODER_INSTANCE }),
    maxConcurrentJobs: parsed.MAX_CONCURRENT_JOBS,
    maxQueuedJobs: parsed.MAX_QUEUED_JOBS ?? parsed.MAX_CONCURRENT_JOBS,
    maxInputBytes: parsed.MAX_INPUT_BYTES,
    maxInputPixels: parsed.MAX_INPUT_PIXELS,
    maxOutputFiles: parsed.MAX_OUTPUT_FILES,
    maxOutputBytes: parsed.MAX_OUTPUT_BYTES,
    maxMemoryBytes: parsed.MAX_MEMORY_BYTES,
    maxJobSeconds: parsed.DEFAULT_TIMEOUT_SECONDS,
    downloadTimeoutSeconds: parsed.DOWNLOAD_TIMEOUT_SECONDS,
    stallSeconds: parsed.STALL_SECONDS,
    shutdownGraceSeconds: parsed.SHUTDOWN_GRACE_SECONDS,
    devFetchAllowHosts: [
      ...(production ? [] : parsed.DEV_FETCH_ALLOW_HOSTS.split(",").map((host) => host.trim().toLowerCase()).filter(Boolean)),
      // In a Container the edge hands over the service's own files under its virtual host, which
      // only the Worker's outbound handler answers (it is never a network host): see containerInputs.
      ...(parsed.EGRESS === "container" ? [CONTAINER_EDGE_HOST] : []),
    ],
    sandbox: parsed.SANDBOX,
    sandboxAllowMissing: parsed.SANDBOX_ALLOW_MISSING,
    egress: parsed.EGRESS,
    timings: { ...DEFAULT_TIMINGS, terminalGiveUpMs: parsed.EDGE_RETRY_SECONDS * 1000 },
  };
}
