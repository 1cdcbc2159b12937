import type { TranscodeJob } from "../../shared/schemas/jobs";
import { type DispatchOutcome, type Dispatcher, outcomeOf } from "./backend";

const DISPATCH_TIMEOUT_MS = 10_000;
const PROBE_TIMEOUT_MS = 3_000;

/**
 * Local development and self-hosting: `TRANSCODER_URL` lists one or more Fastify
 * transcoders. Each job starts at a server picked from its id and moves on to the next when
 * one is busy or down, so load spreads without shared state.
 */
export function urlDispatcher(env: Env): Dispatcher {
  const targets = env.TRANSCODER_URL.split(",").map((url) => url.trim().replace(/\/+$/, "")).filter(Boolean);
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
