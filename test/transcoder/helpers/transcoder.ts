import { mkdtemp, readFile, readdir, readlink, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { FastifyInstance } from "fastify";
import type { TranscodeJob } from "../../../shared/schemas/jobs";
import { buildApp } from "../../../transcoder/app";
import { type Timings, type TranscoderConfig, loadConfig } from "../../../transcoder/config";
import type { EdgeStub } from "./servers";

export const SECRET = "test-transcoder-secret";

/** Short pacing so the suite stays fast; the production values live in config.ts. */
export const TEST_TIMINGS: Partial<Timings> = {
  firstReportMs: 0,
  progressIntervalMs: 200,
  heartbeatMs: 1_000,
  retryBaseMs: 50,
  retryMaxDelayMs: 200,
  progressGiveUpMs: 1_000,
  terminalGiveUpMs: 3_000,
  callbackTimeoutMs: 5_000,
};

export interface TestTranscoder {
  app: FastifyInstance;
  config: TranscoderConfig;
  workRoot: string;
  /** Every log line the app wrote (debug level and up). */
  logs: string[];
  /** Entries left in WORK_ROOT (every job must clean up after itself), besides the sandbox's own job-root skeleton. */
  leftovers(): Promise<string[]>;
  close(): Promise<void>;
}

/** A transcoder app with its own WORK_ROOT, 127.0.0.1 allowed for inputs and test pacing. */
export async function startTranscoder(env: Record<string, string> = {}, timings: Partial<Timings> = {}): Promise<TestTranscoder> {
  const workRoot = await mkdtemp(path.join(os.tmpdir(), "ffedge-work-"));
  const config = loadConfig({
    NODE_ENV: "test",
    LOG_LEVEL: "silent",
    TRANSCODER_SECRET: SECRET,
    WORK_ROOT: workRoot,
    DEV_FETCH_ALLOW_HOSTS: "127.0.0.1",
    MAX_CONCURRENT_JOBS: "4",
    ...env,
  });
  config.timings = { ...config.timings, ...TEST_TIMINGS, ...timings };
  const logs: string[] = [];
  const app = await buildApp(config, { logger: { level: "debug", stream: { write: (line: string) => void logs.push(line) } } });
  return {
    app,
    config,
    workRoot,
    logs,
    leftovers: async () => (await readdir(workRoot)).filter((entry) => !entry.startsWith(".root@")),
    close: async () => {
      await app.close();
      await rm(workRoot, { recursive: true, force: true });
    },
  };
}

/**
 * A job that keeps one core busy for half a minute (upscaling to 720p at x264's slowest preset):
 * long enough to cancel, time out or shut down. The policy refuses `-re`, so work it is.
 */
export function slowCommand(url: string): string {
  return `ffmpeg -i ${url} -vf scale=1280:720 -c:v libx264 -preset veryslow -threads 1 slow.mp4`;
}

let counter = 0;

export function newTaskId(): string {
  return `task-${process.pid}-${Date.now().toString(36)}-${++counter}`;
}

export function jobFor(edge: EdgeStub, command: string, overrides: Partial<TranscodeJob> = {}): TranscodeJob {
  const taskId = overrides.task_id ?? newTaskId();
  return {
    task_id: taskId,
    command,
    with_metadata: false,
    callback_url: edge.callbackUrl(taskId),
    callback_token: edge.tokenFor(taskId),
    timeout_seconds: 60,
    ...overrides,
  };
}

export function postJob(app: FastifyInstance, job: unknown, secret = SECRET) {
  return app.inject({ method: "POST", url: "/jobs", headers: { authorization: `Bearer ${secret}` }, payload: job as object });
}

/** True while `pid` runs (a zombie nobody reaped does not count). */
export async function processRunning(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  const state = /\) (\S)/.exec(stat)?.[1];
  return state !== undefined && state !== "Z" && state !== "X";
}

/** True while any process of the group led by `pid` exists. */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function waitUntil(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The pid of an ffmpeg process working in `text` (a work directory), if one runs: its command
 * line names the directory, or (in a job root, where paths read /job/...) its root is in it.
 */
export async function findFfmpeg(text: string): Promise<number | undefined> {
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = (await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "")).split("\0");
    if (!/(^|\/)ffmpeg$/.test(argv[0] ?? "")) continue;
    const root = await readlink(`/proc/${entry}/root`).catch(() => "");
    if (argv.some((arg) => arg.includes(text)) || root.includes(text)) return Number(entry);
  }
  return undefined;
}
