import { JobMessageSchema, type TranscodeJob } from "../../shared/schemas/jobs";
import { accountStub, poolStub } from "../lib/stubs";
import { dispatcherFor } from "../dispatch/dispatcher";
import { config } from "../lib/config";
import { signToken } from "../lib/signed-token";
import { findTaskById } from "../tasks/repository";
import { taskStub } from "../lib/stubs";

/** Matches `max_retries` in wrangler.toml: the last delivery fails the task instead of dead-lettering it silently. */
export const MAX_DISPATCH_ATTEMPTS = 10;
const MAX_BACKOFF_SECONDS = 60;

/**
 * The jobs queue consumer. Delivery is at least once, so each message first claims its
 * task in the task's Durable Object: a redelivered or duplicate message finds the claim and
 * is acknowledged without dispatching again. A busy transcoder puts the task in the dispatch
 * pool's line (never a dropped job); an unreachable one is retried with backoff, and after
 * the last attempt the task fails with DISPATCH_FAILED.
 * A task over its user's running-task cap waits in its account's line instead.
 */
export async function dispatchJobs(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const dispatcher = dispatcherFor(env);
  await Promise.all(batch.messages.map(async (message) => {
    const parsed = JobMessageSchema.safeParse(message.body);
    if (!parsed.success) {
      console.error(JSON.stringify({ msg: "dropping malformed job message", body: message.body }));
      message.ack();
      return;
    }
    const taskId = parsed.data.task_id;
    const task = taskStub(env, taskId);
    const claim = await task.claimDispatch();
    if (!claim.ok) {
      if (claim.reason === "claimed") message.retry({ delaySeconds: 30 });
      else message.ack();
      return;
    }
    const row = await findTaskById(env.DB, taskId);
    if (!row) {
      await task.failTask("INTERNAL", "The task record is missing.");
      message.ack();
      return;
    }
    if (!(await accountStub(env, row.user_id).acquire(taskId, row.created_at))) {
      // Over the user's running-task cap: the account re-queues this task when its turn comes.
      await task.releaseDispatch();
      message.ack();
      return;
    }
    const outcome = await dispatcher.dispatch(await jobFor(env, row));
    switch (outcome.kind) {
      case "accepted":
      case "duplicate":
        await task.markDispatched(outcome.target);
        message.ack();
        return;
      case "rejected":
        await task.failTask("DISPATCH_FAILED", `The transcoder refused the job: ${outcome.detail}`);
        message.ack();
        return;
      case "busy":
        // Capacity, not failure: wait in line without using up delivery attempts.
        await task.releaseDispatch();
        await poolStub(env).wait(taskId, row.created_at);
        message.ack();
        return;
      case "unreachable":
        if (message.attempts >= MAX_DISPATCH_ATTEMPTS) {
          await task.failTask("DISPATCH_FAILED", `No transcoder took the task after ${message.attempts} attempts; last: ${outcome.detail}.`);
          message.ack();
          return;
        }
        await task.releaseDispatch();
        message.retry({ delaySeconds: backoffSeconds(message.attempts) });
    }
  }));
}

/** Exponential backoff with jitter, at least what the transcoder asked for. */
export function backoffSeconds(attempt: number, retryAfter?: number): number {
  const exponential = Math.min(MAX_BACKOFF_SECONDS, 2 ** Math.max(0, attempt - 1));
  const jittered = Math.ceil(exponential / 2 + Math.random() * (exponential / 2));
  return Math.max(1, retryAfter ?? 0, jittered);
}

async function jobFor(env: Env, row: { id: string; command: string; with_metadata: number }): Promise<TranscodeJob> {
  const settings = config(env);
  const ttl = settings.taskTimeoutSeconds + 3600;
  return {
    task_id: row.id,
    command: row.command,
    with_metadata: row.with_metadata === 1,
    callback_url: `${settings.edgeUrl}/internal/tasks/${row.id}`,
    callback_token: await signToken(env.SIGNING_SECRET, "callback", { t: row.id }, ttl),
    timeout_seconds: settings.taskTimeoutSeconds,
  };
}
