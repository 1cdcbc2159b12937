import { z } from "zod";
import { DELIVERY_MODES } from "../../shared/schemas/destinations";
import { MAX_WAIT_SECONDS } from "./wait";

// Only id characters: the id becomes a path segment, where '.' or '..' would name another route.
export const pathId = (what: string) => z.string().min(1).max(64).regex(/^[\w-]+$/, `${what} has only letters, digits, '_' and '-'`);

export const taskId = pathId("a task id").describe("The task id, 'tsk_' followed by 24 hex digits, from run_ffmpeg or list_tasks");

/** Destinations may be named as well as given by id, and names allow '.', but not first: '.' and '..' would name another route. */
export const nameOrId = (what: string) => z.string().min(1).max(64).regex(/^[\w-][\w.-]*$/, `${what} has only letters, digits, '_', '.' and '-', and does not start with '.'`);

export const waitSeconds = (fallback: number) =>
  z.number().int().min(0).max(MAX_WAIT_SECONDS).default(fallback)
    .describe(`Seconds to wait for the task to end (0-${MAX_WAIT_SECONDS}; MCP clients time a call out after about 60 s). If it is still running then, you get it with its progress: call wait_for_task with its id.`);

const timeoutSeconds = z.number().int().min(1).max(86_400).optional()
  .describe("The task's own time limit in seconds, at most the service's (600 s by default); a short limit reserves less of the daily quota");

export const idempotencyKey = z.string().min(1).max(255).optional()
  .describe("Any unique string, e.g. a UUID. Send the same key when you retry a call that timed out or failed on the way: the service then returns the task it already made instead of running it twice (keys are kept 24 h)");

const destination = z.object({
  id: z.string().min(1).max(64).describe("The destination's name or id, from list_destinations"),
  mode: z.enum(DELIVERY_MODES).default("copy").describe("copy: outputs keep their ffedge download URL and are also written to the bucket. only: once delivered, ffedge's copy is deleted and the output's url points to the bucket"),
}).optional().describe("Also deliver the outputs to one of the user's own S3-compatible buckets (list_destinations shows them; they are set up in the console or the API, never through these tools). Each output's `destination` then says whether it was delivered, its key and url. An unknown name is refused (DESTINATION_NOT_FOUND) and nothing runs");

/** What every tool that submits a task takes besides its work: how long to wait, the task's limit, a retry key, a destination. */
export const runArguments = { wait_seconds: waitSeconds(30), timeout_seconds: timeoutSeconds, idempotency_key: idempotencyKey, destination };
