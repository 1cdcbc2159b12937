import type { TranscodeJob } from "../../shared/schemas/jobs";
import { containerDispatcher } from "./container";
import { urlDispatcher } from "./transcoder-url";

/** What a transcoder said to a job. `busy` and `unreachable` are worth retrying later. */
export type DispatchOutcome =
  | { kind: "accepted"; target: string }
  | { kind: "duplicate"; target: string }
  | { kind: "busy"; retryAfterSeconds?: number; detail: string }
  | { kind: "unreachable"; detail: string }
  | { kind: "rejected"; detail: string };

/** One interface, two backends: local Fastify processes or one Cloudflare Container per task. */
export interface Dispatcher {
  dispatch(job: TranscodeJob): Promise<DispatchOutcome>;
  cancel(taskId: string, target: string): Promise<void>;
}

export function dispatcherFor(env: Env): Dispatcher {
  return env.TRANSCODER_URL.trim() ? urlDispatcher(env) : containerDispatcher(env);
}

/** Turns a transcoder's answer to `POST /jobs` into an outcome. */
export async function outcomeOf(response: Response, target: string): Promise<DispatchOutcome> {
  const body = await response.text().catch(() => "");
  if (response.status === 202) return { kind: "accepted", target };
  if (response.status === 409) return { kind: "duplicate", target };
  if (response.status === 429 || response.status === 503) {
    const retryAfter = Number(response.headers.get("retry-after"));
    return { kind: "busy", retryAfterSeconds: Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined, detail: `${target} is at capacity (${response.status})` };
  }
  if (response.status >= 500) return { kind: "unreachable", detail: `${target} answered ${response.status}` };
  return { kind: "rejected", detail: `${target} refused the job (${response.status}): ${body.slice(0, 300)}` };
}
