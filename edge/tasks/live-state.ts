import { taskStub } from "../lib/stubs";
import type { CancelResult, LiveState } from "./state";

// Task outputs carry ffprobe metadata typed `unknown`, which RPC's type mapping cannot prove
// serialisable (it types such results `never`); these give the task object's answers their
// real types. They live beside the state they return, above the platform's stubs (edge/lib/).

export async function liveState(env: Env, taskId: string): Promise<LiveState | undefined> {
  return (await taskStub(env, taskId).getState()) as LiveState | undefined;
}

export async function cancelTask(env: Env, taskId: string): Promise<CancelResult> {
  return (await taskStub(env, taskId).cancel()) as CancelResult;
}
