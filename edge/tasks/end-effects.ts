import { dispatcherFor } from "../dispatch/dispatcher";
import { log } from "../lib/log";
import { dispatchLineStub } from "../lib/stubs";
import { discardTaskFiles } from "./outputs";
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

