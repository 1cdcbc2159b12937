import { dispatcherFor } from "../dispatch/dispatcher";
import type { JobSpec } from "../dispatch/job";
import { log } from "../lib/log";
import { dispatchLineStub } from "../lib/stubs";
import { discardTaskFiles } from "./outputs";
import type { TaskRow } from "./repository";
import type { LiveState } from "./state";

/**
 * What follows a task's end, once the end is durable in D1 and in the task's object: its
 * slot goes to the next task in its user's line, whatever ran it is released, and a failed
 * task's stored outputs are deleted. (Its webhook event goes from the object's outbox.) None
 * can undo the end; each failure is logged and caught up later (the line's alarm re-derives
 * slots from task states; outputs left behind expire with their rows and are swept).
 */
export async function afterTaskEnded(env: Env, state: LiveState): Promise<void> {
  const effects: [string, Promise<unknown>][] = [
    ["release the user's slot and wake the line", dispatchLineStub(env, state.user_id).release(state.task_id)],
    ["release the transcoder", dispatcherFor(env).release(state.task_id, state.dispatch_target)],
    // A task that did not complete has no outputs: whatever its run stored before the end goes.
    ["discard the outputs of a task that did not complete", state.status === "failed" ? discardTaskFiles(env, state.user_id, state.task_id) : Promise.resolve()],
  ];
  const results = await Promise.allSettled(effects.map(([, effect]) => effect));
  results.forEach((result, index) => {
    if (result.status === "rejected") log.error(`could not ${effects[index]![0]}`, { task_id: state.task_id, error: result.reason });
  });
}

/** The task's D1 record as `markFinished` leaves it, from the object's own state: what its end event presents. */
export function endedTaskRow(state: LiveState, job: JobSpec): TaskRow {
  return {
    id: state.task_id,
    user_id: state.user_id,
    command: job.command,
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
    webhook_enqueued_at: null,
  };
}
