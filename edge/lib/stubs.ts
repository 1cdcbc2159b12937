import type { AccountObject } from "../accounts/account-object";
import type { DispatchPoolObject } from "../dispatch/pool-object";
import type { LiveState } from "../tasks/state";
import type { CancelResult, TaskObject } from "../tasks/task-object";

// Typed stubs for the Durable Objects, kept apart from the classes so that the objects can
// call each other without a module cycle (`wrangler types` does not type namespaces).

export function taskStub(env: Env, taskId: string): DurableObjectStub<TaskObject> {
  return (env.TASKS as unknown as DurableObjectNamespace<TaskObject>).get(env.TASKS.idFromName(taskId));
}

export function accountStub(env: Env, userId: string): DurableObjectStub<AccountObject> {
  return (env.ACCOUNTS as unknown as DurableObjectNamespace<AccountObject>).get(env.ACCOUNTS.idFromName(userId));
}

/** The one line for transcoder capacity. */
export function poolStub(env: Env): DurableObjectStub<DispatchPoolObject> {
  return (env.DISPATCH_POOL as unknown as DurableObjectNamespace<DispatchPoolObject>).get(env.DISPATCH_POOL.idFromName("pool"));
}

// Task outputs carry ffprobe metadata typed `unknown`, which RPC's type mapping cannot prove
// serialisable (it types such results `never`); these give the results their real types.

export async function liveState(env: Env, taskId: string): Promise<LiveState | undefined> {
  return (await taskStub(env, taskId).getState()) as LiveState | undefined;
}

export async function cancelTask(env: Env, taskId: string): Promise<CancelResult> {
  return (await taskStub(env, taskId).cancel()) as CancelResult;
}
