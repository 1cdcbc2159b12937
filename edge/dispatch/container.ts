import { getContainer } from "@cloudflare/containers";
import { CONTAINER_EDGE_HOST } from "../../shared/egress";
import type { TranscodeJob } from "../../shared/schemas/jobs";
import { config } from "../lib/config";
import { containerPoolStub } from "../lib/stubs";
import type { TranscoderContainer } from "./transcoder-container";
import { type DispatchOutcome, type Dispatcher, outcomeOf } from "./backend";

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
export function containerDispatcher(env: Env): Dispatcher {
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
          outputs_direct: true,
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
  if (!env.TRANSCODER_URL.trim()) await containerPoolStub(env).tick();
}
