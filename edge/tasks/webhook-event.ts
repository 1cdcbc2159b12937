import type { TaskDestination } from "../../shared/schemas/destinations";
import type { WebhookHandover } from "../../shared/schemas/webhooks";
import type { JobSpec } from "../dispatch/job";
import { log } from "../lib/log";
import { RETRY_WINDOW_MS } from "../webhooks/delivery";
import { type OwnerEndpoints, endpointsFor } from "../webhooks/endpoints";
import { handOver, webhookIdFor } from "../webhooks/handover";
import { type TaskRecord, presentTask } from "./present";
import { listTasksMissingEndpointEvents, listUndeliveredWebhookTasks } from "./repository";
import type { LiveState } from "./state";
import { shownCommand, storedSteps } from "./steps";

/** What a task's end event is built from: the record the API presents, and where the event goes. */
export type WebhookTaskRecord = TaskRecord & { webhook_url: string | null };

/**
 * The end event of a task, built from its record. The body is the task object itself, exactly
 * what GET /v1/tasks/{task_id} returns, as FFHub posts it (receivers read `body.status`); the
 * event type travels in the `webhook-event` header, which no receiver of either kind trips on.
 * A finished task no longer changes, so every attempt sends the same bytes. Undefined while the
 * task has not ended.
 */
export function taskEvent(env: Env, task: TaskRecord): WebhookHandover["event"] | undefined {
  if ((task.status !== "completed" && task.status !== "failed") || !task.finished_at) return undefined;
  const type = task.status === "completed" ? "task.completed" : "task.failed";
  return { id: webhookIdFor(task.id, type), type, body: JSON.stringify(presentTask(env, task)) };
}

/**
 * What the receivers' objects need to deliver the task's end event: to the task's own webhook
 * (`url`, null without one) and to its owner's registered endpoints (`endpoints`, as the end's
 * own write read them; absent, the hand-over reads them). Undefined until the task ends.
 */
export function handoverFor(env: Env, task: WebhookTaskRecord, redelivery: boolean, now = new Date(), endpoints?: OwnerEndpoints): WebhookHandover | undefined {
  const event = taskEvent(env, task);
  if (!event) return undefined;
  const subscribed = endpoints ? { endpoints: endpointsFor(endpoints, event.type) } : {};
  return { task_id: task.id, user_id: task.user_id, url: task.webhook_url, event, first_attempt_at: now.toISOString(), redelivery, ...subscribed };
}

/**
 * The `seq`-th progress event of a running task, for its owner's endpoints: the task as GET
 * shows it then (status running, progress, eta_seconds), signed and sent as the end events are.
 */
export function progressEvent(env: Env, state: LiveState, job: JobSpec, seq: number, destination?: TaskDestination): { id: string; type: "task.progress"; body: string } {
  return { id: `msg_${state.task_id}_progress_${seq}`, type: "task.progress", body: JSON.stringify(presentTask(env, endedTaskRecord(state, job, destination), state)) };
}

/**
 * The task's record from its object's state, its job as submitted and the destination it named:
 * at its end, the values `markFinished` has just written to D1, so the event is built without
 * reading them back.
 */
export function endedTaskRecord(state: LiveState, job: JobSpec, destination?: TaskDestination): WebhookTaskRecord {
  return {
    id: state.task_id,
    user_id: state.user_id,
    command: job.steps ? shownCommand(job.steps) : job.command,
    steps: storedSteps(job.steps),
    with_metadata: job.with_metadata ? 1 : 0,
    webhook_url: job.webhook_url,
    status: state.status,
    progress: Math.floor(state.progress),
    outputs: state.outputs ? JSON.stringify(state.outputs) : null,
    error: state.error,
    error_code: state.error_code,
    created_at: state.created_at,
    started_at: state.started_at,
    finished_at: state.finished_at,
    retries: state.retries,
    destination: destination ? JSON.stringify(destination) : null,
    retry_of: state.retry_of ?? null,
  };
}

/** Finished this long ago with no attempt recorded means the task's own hand-over never happened. */
const UNSENT_GRACE_MS = 2 * 60_000;
const UNSENT_BATCH = 100;

/**
 * The cron's sweep behind each task's outbox: hands over the event of every task that ended
 * in the last 24 h and still has no recorded attempt at its webhook, or no record at one of
 * its owner's endpoints subscribed to it (its Durable Object lost the end between D1 and its
 * own storage). A receiver still holding the event ignores the repeat, an endpoint with an
 * attempt on record is skipped; should one be sent twice, it carries the same `webhook-id`
 * (at least once, never lost).
 */
export async function sweepUndeliveredWebhooks(env: Env, now = new Date()): Promise<number> {
  const range = {
    after: new Date(now.getTime() - RETRY_WINDOW_MS).toISOString(),
    before: new Date(now.getTime() - UNSENT_GRACE_MS).toISOString(),
    limit: UNSENT_BATCH,
  };
  const [withWebhook, forEndpoints] = await Promise.all([listUndeliveredWebhookTasks(env.DB, range), listTasksMissingEndpointEvents(env.DB, range)]);
  // A task whose webhook already has an attempt on record goes to its endpoints only.
  const rows = new Map<string, WebhookTaskRecord>(forEndpoints.map((row) => [row.id, { ...row, webhook_url: null }]));
  for (const row of withWebhook) rows.set(row.id, row);
  let handed = 0;
  for (const row of rows.values()) {
    const handover = handoverFor(env, row, false, now);
    if (!handover) continue;
    await handOver(env, handover).then(() => handed++, (error) => log.error("webhook sweep hand-over failed", { task_id: row.id, error }));
  }
  return handed;
}
