import { getContainer } from "@cloudflare/containers";
import { CONTAINER_EDGE_HOST } from "../../shared/egress";
import type { TranscodeJob } from "../../shared/schemas/jobs";
import type { JobMessage } from "../../shared/schemas/queue";
import type { TaskStatus } from "../../shared/schemas/tasks";
import { config } from "../lib/config";
import { containerPoolStub, taskStub } from "../lib/stubs";
import type { TranscoderContainer } from "./transcoder-container";

/** One interface, two backends: local Fastify processes or one Cloudflare Container per task. */
export interface Dispatcher {
  dispatch(job: TranscodeJob): Promise<DispatchOutcome>;
  /** Stops the task's run `run` at `target` (a run given up for a newer one), or whichever run is there (a canceled task). */
  cancel(taskId: string, target: string, run?: number): Promise<void>;
  /**
   * The task has ended: whatever ran it may go (its container is removed; a shared server
   * stays). Also called for a task with no target yet: it may have ended while its dispatch was
   * on its way, and a container may already be starting for it.
   */
  release(taskId: string, target: string | null): Promise<void>;
  /**
   * False only when run `run` of the task is certainly gone from `target` (the server is down,
   * or answers that it does not have that run), so the task can be started again at once
   * instead of after the heartbeat timeout. A run whose work is done and whose end is still on
   * its way to the edge is not gone.
   */
  isRunning(taskId: string, target: string, run: number): Promise<boolean>;
}

/**
 * What a transcoder said to a job. `busy` and `unreachable` are worth trying again later;
 * `stale`: that run of the task already ran there (or a later one did), so this dispatch
 * started nothing and the run is lost. Only `accepted` means the run is running.
 */
export type DispatchOutcome =
  | { kind: "accepted"; target: string }
  | { kind: "stale"; detail: string }
  | { kind: "busy"; detail: string }
  | { kind: "unreachable"; detail: string }
  | { kind: "rejected"; detail: string };

/** The backend this deployment dispatches to: local Fastify servers when TRANSCODER_URL is set, else Containers. */
export function dispatcherFor(env: Env): Dispatcher {
  return config(env).transcoderUrls.length > 0 ? urlDispatcher(env) : containerDispatcher(env);
}

/** The one producer of job messages: asks the consumer to dispatch these tasks. */
export async function queueJobs(env: Env, jobs: readonly JobMessage[]): Promise<void> {
  if (jobs.length === 0) return;
  await env.JOBS.sendBatch(jobs.map(({ task_id, user_id, created_at }) => ({ body: { task_id, user_id, created_at } satisfies JobMessage })));
}

/**
 * Whether the task is over for dispatch: it ended, or its object holds no task. The line and
 * the pool ask it of slots and containers whose release may have been lost; they ask the task's
 * object itself (through its stub), the one writer of its state. Throws when the object does
 * not answer: the caller asks again later.
 */
export async function taskIsOver(env: Env, taskId: string): Promise<boolean> {
  // RPC cannot type the whole state (its outputs carry `unknown` metadata); the status is all asked here.
  const state = (await taskStub(env, taskId).getState()) as { status: TaskStatus } | undefined;
  return state === undefined || state.status === "completed" || state.status === "failed";
}

/** Turns a transcoder's answer to `POST /jobs` into an outcome. */
export async function outcomeOf(response: Response, target: string): Promise<DispatchOutcome> {
  // The status decides the outcome; the body only adds detail.
  const body = await response.text().catch(() => "");
  if (response.status === 202) return { kind: "accepted", target };
  if (response.status === 409) return { kind: "stale", detail: `${target} had already run this attempt of the task (409): ${body.slice(0, 300)}` };
  // At capacity, shutting down or short of work space: not taken now, and nothing is lost.
  if (response.status === 429 || response.status === 503) return { kind: "busy", detail: `${target} cannot take the job now (${response.status}): ${body.slice(0, 300)}` };
  if (response.status >= 500) return { kind: "unreachable", detail: `${target} answered ${response.status}` };
  return { kind: "rejected", detail: `${target} refused the job (${response.status}): ${body.slice(0, 300)}` };
}

const DISPATCH_TIMEOUT_MS = 10_000;
const PROBE_TIMEOUT_MS = 3_000;

/**
 * Local development and self-hosting: `TRANSCODER_URL` lists one or more Fastify
 * transcoders. Each job starts at a server picked from its id and moves on to the next when
 * one is busy or down, so load spreads without shared state.
 */
function urlDispatcher(env: Env): Dispatcher {
  const targets = config(env).transcoderUrls;
  const auth = { authorization: `Bearer ${env.TRANSCODER_SECRET}` };
  const runUrl = (target: string, taskId: string, run?: number) => `${target}/jobs/${encodeURIComponent(taskId)}${run === undefined ? "" : `?run=${run}`}`;
  return {
    async dispatch(job: TranscodeJob): Promise<DispatchOutcome> {
      const start = hash(job.task_id) % targets.length;
      let last: DispatchOutcome = { kind: "unreachable", detail: "no transcoder configured" };
      for (let i = 0; i < targets.length; i++) {
        const target = targets[(start + i) % targets.length]!;
        try {
          const response = await fetch(`${target}/jobs`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(job), signal: AbortSignal.timeout(DISPATCH_TIMEOUT_MS) });
          last = await outcomeOf(response, target);
        } catch (error) {
          last = { kind: "unreachable", detail: `${target}: ${(error as Error).message}` };
        }
        if (last.kind !== "busy" && last.kind !== "unreachable") return last;
      }
      return last;
    },
    // A DELETE has no body, so it says no content type.
    async cancel(taskId: string, target: string, run?: number): Promise<void> {
      await fetch(runUrl(target, taskId, run), { method: "DELETE", headers: auth, signal: AbortSignal.timeout(DISPATCH_TIMEOUT_MS) })
        .then((response) => response.body?.cancel())
        // A transcoder that missed the cancel is told to stop by the answer to its next report.
        .catch(() => undefined);
    },
    // A shared server outlives its tasks.
    async release(): Promise<void> {},
    // Jobs live in the server's memory: one that does not answer, or answers that it does not
    // know the run (it restarted, or runs a newer one), has lost it. Anything else is no proof of loss.
    async isRunning(taskId: string, target: string, run: number): Promise<boolean> {
      try {
        const response = await fetch(runUrl(target, taskId, run), { headers: auth, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
        await response.body?.cancel();
        return response.status !== 404;
      } catch {
        return false;
      }
    },
  };
}

function hash(text: string): number {
  let value = 0;
  for (let i = 0; i < text.length; i++) value = (value * 31 + text.charCodeAt(i)) >>> 0;
  return value;
}

const TARGET_PREFIX = "container:";

/**
 * Production: one Cloudflare Container per task, so a task's ffmpeg never shares a machine
 * with another user's. The pool (container-pool.ts) gives each task its container: a warm one
 * started before the task came, when there is one, so a short task does not wait seconds for a
 * cold start; none while every instance is in use (the task waits in its line). The container
 * lives exactly as long as the task's runs: a run given up (cancel) before the next one went
 * in removes it, and the task's end (release) removes it, whatever the ending.
 * https://developers.cloudflare.com/containers/
 */
function containerDispatcher(env: Env): Dispatcher {
  const namespace = env.TRANSCODER as unknown as DurableObjectNamespace<TranscoderContainer>;
  const container = (name: string) => getContainer(namespace, name);
  const pool = () => containerPoolStub(env);
  return {
    async dispatch(job: TranscodeJob): Promise<DispatchOutcome> {
      let target = TARGET_PREFIX;
      try {
        const claim = await pool().claim(job.task_id);
        if (claim.kind === "busy") return { kind: "busy", detail: `all ${TARGET_PREFIX} instances are in use` };
        if (claim.kind === "ended") return { kind: "stale", detail: `task ${job.task_id} has ended; no container is started for it` };
        target = `${TARGET_PREFIX}${claim.name}`;
        // The container reaches the edge through its outbound handler, never our public hostname,
        // and its outputs stream into R2 there (no presigned URL, no request-body limit).
        const response = await container(claim.name).startJob({
          ...job,
          command: containerInputs(env, job.command),
          callback_url: `https://${CONTAINER_EDGE_HOST}/internal/tasks/${job.task_id}`,
        });
        return outcomeOf(response, target);
      } catch (error) {
        return { kind: "unreachable", detail: `${target}: ${(error as Error).message}` };
      }
    },
    // A run given up for a new one: its container goes with it (the next run starts clean) unless
    // the next run is already in there. Without a run, the task was canceled: it has ended.
    async cancel(taskId: string, target: string, run?: number): Promise<void> {
      const name = nameOf(target);
      if (run === undefined) return pool().release(taskId);
      if (name) await container(name).stopRun(taskId, run);
    },
    // Also for a task that ended before its dispatch answered: the pool knows its container.
    async release(taskId: string): Promise<void> {
      await pool().release(taskId);
    },
    // Asks the container's object without starting a container; a crashed one is noticed at once.
    async isRunning(taskId: string, target: string): Promise<boolean> {
      const name = nameOf(target);
      return name ? container(name).isRunning() : false;
    },
  };
}

/**
 * The service's own files named in a command (uploads, earlier outputs) are fetched by the
 * container from the edge's virtual host, which the outbound handler serves from R2 in this
 * Worker: a public URL would leave through the CDN hostname (locally an unintercepted port on
 * the container's own loopback; in production a request from the Worker to its own zone), and
 * the bytes would cross the CDN for nothing. Only the URL's origin changes; the transcoder
 * replaces every input with a local file before ffmpeg runs.
 */
export function containerInputs(env: Env, command: string): string {
  const settings = config(env);
  const origins = [...new Set([settings.publicUrl, settings.cnPublicUrl, settings.edgeUrl])].filter(Boolean);
  let rewritten = command;
  for (const origin of origins) {
    for (const area of ["uploads", "outputs"]) rewritten = rewritten.replaceAll(`${origin}/${area}/`, `https://${CONTAINER_EDGE_HOST}/${area}/`);
  }
  return rewritten;
}

function nameOf(target: string | null): string | undefined {
  return target?.startsWith(TARGET_PREFIX) && target.length > TARGET_PREFIX.length ? target.slice(TARGET_PREFIX.length) : undefined;
}

/** The cron sweep's part in the container topology: the pool is kept, and filled after a deploy. */
export async function keepContainerPool(env: Env): Promise<void> {
  if (config(env).transcoderUrls.length === 0) await containerPoolStub(env).tick();
}
