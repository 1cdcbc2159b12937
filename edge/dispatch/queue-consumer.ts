import { type JobMessage, JobMessageSchema } from "../../shared/schemas/queue";
import { log } from "../lib/log";
import { dispatchLineStub, taskStub } from "../lib/stubs";

/**
 * How long one user's messages may take. The local Queues simulator hands the consumer one
 * batch at a time and waits for it, so a message that never settles would wedge the queue for
 * everyone; in production it would hold its batch until the 15-minute wall-clock limit.
 * https://developers.cloudflare.com/queues/platform/limits/
 */
export const MESSAGE_BUDGET_MS = 30_000;

/**
 * The jobs queue consumer. Each user's jobs in the batch first ask the user's line for slots,
 * together, so they are served in submission order; each job given a slot is then dispatched
 * by its task's Durable Object, which claims it first (delivery is at least once: a duplicate
 * finds the claim, or the dispatch, and does nothing). Every message is acknowledged, whatever
 * happened: the task's own alarm queues the job again when this delivery did not move it, so
 * a retry never uses up delivery attempts and no task is dead-lettered with nothing said. That
 * is why the queue has no dead-letter queue (wrangler.toml): nothing would ever reach it. A
 * malformed message is logged with its body and dropped, as no retry could make it valid and
 * its task (if any) is still held by its alarm. A task over its user's running-task cap, or
 * that every transcoder is too busy for, waits in a line that queues it again in its turn.
 */
export async function dispatchJobs(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const byUser = new Map<string, JobMessage[]>();
  for (const message of batch.messages) {
    const parsed = JobMessageSchema.safeParse(message.body);
    if (!parsed.success) log.error("dropping malformed job message", { body: message.body });
    else byUser.set(parsed.data.user_id, [...(byUser.get(parsed.data.user_id) ?? []), parsed.data]);
  }
  await Promise.all([...byUser].map(async ([userId, jobs]) => {
    try {
      await withinBudget(dispatchUserJobs(env, userId, jobs), MESSAGE_BUDGET_MS);
    } catch (error) {
      log.error("job messages not dispatched; the tasks' alarms will queue them again", { task_ids: jobs.map((job) => job.task_id), error });
    }
  }));
  for (const message of batch.messages) message.ack();
}

async function dispatchUserJobs(env: Env, userId: string, jobs: JobMessage[]): Promise<void> {
  const line = dispatchLineStub(env, userId);
  const granted = new Set(await line.acquire(jobs));
  await Promise.all(jobs.map(async (job) => {
    const task = taskStub(env, job.task_id);
    if (!granted.has(job.task_id)) return task.markWaiting();
    const result = await task.dispatch();
    // A late duplicate of an ended (or unknown) task was just given a slot it will never free.
    if (result.kind === "skipped" && (result.reason === "final" || result.reason === "unknown")) return line.release(job.task_id);
    if (result.kind === "busy") return line.waitForCapacity(job);
  }));
}

function withinBudget<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still not settled after ${ms} ms`)), ms);
  });
  // Work given up on may still fail later; that is logged by nobody, on purpose.
  work.catch(() => undefined);
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}
