import type { JobEvent } from "../../shared/schemas/jobs";
import { taskStub } from "../lib/stubs";
import { liveState } from "./live-state";
import { storeLog } from "./logs";
import { allReceipted, discardTaskFiles } from "./outputs";

/** Who sent a report: the task, its run and its owner, as the callback token names them. */
export interface Reporter {
  taskId: string;
  run: number;
  userId: string;
}

/**
 * One report from a task's transcoder: ffmpeg's log goes to R2 before the end is recorded (so it
 * is there as soon as the task shows as ended; the task's object keeps the report without it),
 * the edge's receipts spare the object its R2 lookups, and the object's answer says whether the
 * run must stop.
 */
export async function acceptReport(env: Env, reporter: Reporter, report: JobEvent): Promise<{ ok: boolean; cancel: boolean }> {
  const { taskId, run, userId } = reporter;
  let event = report;
  if ((event.type === "completed" || event.type === "failed") && event.log !== undefined) {
    await storeLog(env, userId, taskId, event.log);
    event = { ...event, log: undefined };
  }
  let outputsStored = false;
  if (event.type === "completed") {
    outputsStored = await allReceipted(env, userId, taskId, event.outputs);
    event = { ...event, outputs: event.outputs.map(({ receipt: _receipt, ...output }) => output) };
  }
  const answer = await taskStub(env, taskId).report(event, run, outputsStored);
  if (event.type !== "started" && event.type !== "progress" && answer.cancel) await discardLateFiles(env, taskId, userId, answer.ok);
  return answer;
}

/**
 * A run's last report comes after all its uploads. When it finds its task ended without
 * completing, or deleted, whatever the run left in R2 since is deleted: an output whose upload
 * stopped between its R2 put and the delete of a refused row, and for a deleted task the log
 * this report just stored. Nothing else would ever delete them.
 */
async function discardLateFiles(env: Env, taskId: string, userId: string, taskExists: boolean): Promise<void> {
  if (!taskExists) return discardTaskFiles(env, userId, taskId, true);
  const state = await liveState(env, taskId);
  if (state?.status === "failed") await discardTaskFiles(env, userId, taskId);
}
