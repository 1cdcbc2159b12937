import { dispatcherFor } from "../dispatch/dispatcher";
import { accountStub, poolStub } from "../lib/stubs";
import { enqueueTaskEnded } from "../webhooks/enqueue";
import type { LiveState } from "./state";

/**
 * What follows a task's end, once the end is durable in D1 and in the task's object: its
 * slot goes to the next task in line, whatever ran it is released, and its webhook event is
 * queued. None of these can undo the end; each failure is logged and caught up later (the
 * line's alarm re-derives slots from task states, the cron queues unsent webhook events).
 */
export async function afterTaskEnded(env: Env, state: LiveState): Promise<void> {
  const effects: [string, Promise<unknown>][] = [
    ["release the user's slot", accountStub(env, state.user_id).release(state.task_id)],
    ["wake the dispatch line", poolStub(env).released()],
    ["release the transcoder", state.dispatch_target ? dispatcherFor(env).release(state.task_id, state.dispatch_target) : Promise.resolve()],
    ["queue the webhook event", enqueueTaskEnded(env, state.task_id)],
  ];
  const results = await Promise.allSettled(effects.map(([, effect]) => effect));
  results.forEach((result, index) => {
    if (result.status === "rejected") console.error(JSON.stringify({ msg: `could not ${effects[index]![0]}`, task_id: state.task_id, error: String(result.reason) }));
  });
}
