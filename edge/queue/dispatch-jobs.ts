import { JobMessageSchema } from "../../shared/schemas/queue";
import type { TranscodeJob } from "../../shared/schemas/jobs";
import type { Dispatcher } from "../dispatch/backend";
import { dispatcherFor } from "../dispatch/dispatcher";
import { config } from "../lib/config";
import { signToken } from "../lib/signed-token";
import { accountStub, poolStub, taskStub } from "../lib/stubs";
import { findTaskById } from "../tasks/repository";

/**
 * How long one message may take. The local Queues simulator hands the consumer one batch at a
 * time and waits for it, so a message that never settles would wedge the queue for everyone;
 * in production it would hold its batch until the 15-minute wall-clock limit.
 * https://developers.cloudflare.com/queues/platform/limits/
 */
export const MESSAGE_BUDGET_MS = 30_000;

/**
 * The jobs queue consumer. Delivery is at least once, so each message first claims its task
 * in the task's Durable Object: a duplicate finds the claim (or the dispatch) and does nothing.
 * Every message is acknowledged, whatever happened: the task's own alarm queues the job
 * again when this delivery did not move it, so a retry never uses up delivery attempts and
 * no task is dead-lettered with nothing said. A task over its user's running-task cap, or
 * that every transcoder is too busy for, waits in a line that queues it again in its turn.
 */
export async function dispatchJobs(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const dispatcher = dispatcherFor(env);
  await Promise.all(batch.messages.map(async (message) => {
    try {
      await withinBudget(dispatchOne(env, dispatcher, message.body), MESSAGE_BUDGET_MS);
    } catch (error) {
      console.error(JSON.stringify({ msg: "job message not dispatched; the task's alarm will queue it again", body: message.body, error: String(error) }));
    }
    message.ack();
  }));
}

async function dispatchOne(env: Env, dispatcher: Dispatcher, body: unknown): Promise<void> {
  const parsed = JobMessageSchema.safeParse(body);
  if (!parsed.success) {
    console.error(JSON.stringify({ msg: "dropping malformed job message", body }));
    return;
  }
  const taskId = parsed.data.task_id;
  const task = taskStub(env, taskId);
  const claim = await task.claimDispatch();
  if (!claim.ok) return;
  const row = await findTaskById(env.DB, taskId);
  if (!row) {
    await task.failTask("INTERNAL", "The task record is missing.");
    return;
  }
  if (!(await accountStub(env, row.user_id).acquire(taskId, row.created_at))) {
    await task.markWaiting();
    return;
  }
  const outcome = await dispatcher.dispatch(await jobFor(env, row, claim.run));
  switch (outcome.kind) {
    case "accepted":
    case "duplicate":
      return task.markDispatched(outcome.target);
    case "rejected":
      await task.failTask("DISPATCH_FAILED", `The transcoder refused the job: ${outcome.detail}`);
      return;
    case "busy":
      // Capacity, not failure: wait in line, woken as soon as any task ends.
      await task.markWaiting();
      return poolStub(env).wait(taskId, row.created_at);
    case "unreachable":
      return task.markUnreachable();
  }
}

function withinBudget<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still not settled after ${ms} ms`)), ms);
  });
  // A message given up on may still fail later; that is logged by nobody, on purpose.
  work.catch(() => undefined);
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function jobFor(env: Env, row: { id: string; command: string; with_metadata: number }, run: number): Promise<TranscodeJob> {
  const settings = config(env);
  const ttl = settings.taskTimeoutSeconds + 3600;
  return {
    task_id: row.id,
    command: row.command,
    with_metadata: row.with_metadata === 1,
    callback_url: `${settings.edgeUrl}/internal/tasks/${row.id}`,
    // The run number goes into the token: a lost run that comes back cannot report on its successor.
    callback_token: await signToken(env.SIGNING_SECRET, "callback", { t: row.id, r: run }, ttl),
    timeout_seconds: settings.taskTimeoutSeconds,
  };
}
