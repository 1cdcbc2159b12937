import type { OutputDestination, TaskDestination } from "../../shared/schemas/destinations";
import type { PublicTask, Task, TaskEvent } from "../../shared/schemas/tasks";
import { publicUrls } from "../files/records";
import type { DeliveredOutput, StoredDelivery } from "./deliveries";
import { outputKey } from "./outputs";
import type { TaskRow } from "./repository";
import { type LiveState, type StoredOutput, etaSeconds, isFinal } from "./state";
import { chainProgress, presentSteps, stepsOfRecord } from "./steps";

/** The columns of a task's record that the API presents. */
export type TaskRecord = Pick<TaskRow, "id" | "user_id" | "command" | "steps" | "with_metadata" | "status" | "progress" | "outputs" | "error" | "error_code" | "created_at" | "started_at" | "finished_at" | "retries" | "destination" | "retry_of">;

/** The API's view of a task: the D1 record, overlaid with the live state while it runs. */
export function presentTask(env: Env, row: TaskRecord, live?: LiveState, now = Date.now()): Task {
  const status = live && !isFinal(row.status) ? live.status : row.status;
  const startedAt = row.started_at ?? live?.started_at ?? null;
  const finishedAt = row.finished_at ?? (live && isFinal(live.status) ? live.finished_at : null);
  const outputs: StoredOutput[] | null = row.outputs ? JSON.parse(row.outputs) : live?.status === "completed" ? live.outputs : null;
  const end = finishedAt ? Date.parse(finishedAt) : now;
  const task: Task = {
    task_id: row.id,
    status,
    progress: status === "completed" ? 100 : Math.min(99, Math.floor(live && !isFinal(row.status) ? live.progress : row.progress)),
    ...etaField(live && !isFinal(row.status) ? live : undefined, now),
    command: row.command,
    with_metadata: row.with_metadata === 1,
    ...(row.destination ? { destination: JSON.parse(row.destination) as TaskDestination } : {}),
    ...(row.retry_of ? { retry_of: row.retry_of } : {}),
    retries: Math.max(row.retries ?? 0, live?.retries ?? 0),
    created_at: row.created_at,
    started_at: startedAt,
    finished_at: finishedAt,
    elapsed: startedAt ? seconds(end - Date.parse(startedAt)) : null,
    total_elapsed: seconds(end - Date.parse(row.created_at)),
  };
  if (status === "completed" && outputs) task.outputs = presentOutputs(env, row.user_id, row.id, outputs, row.with_metadata === 1);
  if (status === "failed") {
    task.error = row.error ?? live?.error ?? "The task failed.";
    const code = row.error_code ?? live?.error_code;
    if (code) task.error_code = code;
    if (code === "CANCELED" && finishedAt) task.canceled_at = finishedAt;
  }
  const steps = stepsOfRecord(row);
  if (steps) task.steps = presentSteps(steps, task, outputs, live);
  if (steps) task.progress = chainProgress(task);
  return task;
}

/**
 * The task as a request without a key sees it (PublicTaskSchema): the owner's view less the
 * command and flags, and with its failure named by code only.
 */
export function presentPublicTask(task: Task): PublicTask {
  const { task_id, status, progress, eta_seconds, error_code, canceled_at, created_at, started_at, finished_at, elapsed, total_elapsed } = task;
  // Where the owner's own bucket is (destination ids, keys) is the owner's business.
  const outputs = task.outputs?.map(({ destination: _destination, ...output }) => output);
  return {
    task_id, status, progress, ...(eta_seconds === undefined ? {} : { eta_seconds }), ...(outputs ? { outputs } : {}),
    ...(task.error === undefined ? {} : { error: `The task failed (${error_code ?? "FAILED"}). Its details are shown only with the owner's API key.`, ...(error_code ? { error_code } : {}) }),
    ...(canceled_at ? { canceled_at } : {}),
    created_at, started_at, finished_at, elapsed, total_elapsed,
  };
}

/** The live view pushed to watchers, built from the Durable Object's state alone. */
export function presentLive(env: Env, state: LiveState, now = Date.now()): TaskEvent {
  return {
    task_id: state.task_id,
    status: state.status,
    progress: state.status === "completed" ? 100 : Math.min(99, Math.floor(state.progress)),
    ...etaField(state, now),
    started_at: state.started_at,
    finished_at: state.finished_at,
    ...(state.status === "completed" && state.outputs ? { outputs: presentOutputs(env, state.user_id, state.task_id, state.outputs, false) } : {}),
    ...(state.status === "failed" ? { error: state.error ?? "The task failed.", ...(state.error_code ? { error_code: state.error_code } : {}) } : {}),
    ...(state.status === "failed" && state.error_code === "CANCELED" && state.finished_at ? { canceled_at: state.finished_at } : {}),
  };
}

/** An output delivered `only` to its destination lives there alone: its `url` is the destination's. */
function presentOutputs(env: Env, userId: string, taskId: string, outputs: DeliveredOutput[], withMetadata: boolean): NonNullable<Task["outputs"]> {
  return outputs.map((output) => {
    const delivery = output.destination;
    const moved = delivery?.mode === "only" && delivery.status === "delivered" ? delivery.url : undefined;
    return {
      filename: output.filename,
      url: moved ?? publicUrls(env, outputKey(userId, taskId, output.filename)).url,
      size: output.size,
      ...(withMetadata && output.metadata ? { metadata: output.metadata } : {}),
      ...(delivery ? { destination: withoutMode(delivery) } : {}),
    };
  });
}

function withoutMode({ mode: _mode, ...destination }: StoredDelivery): OutputDestination {
  return destination;
}

function etaField(state: LiveState | undefined, now: number): { eta_seconds?: number } {
  const eta = state ? etaSeconds(state, now) : undefined;
  return eta === undefined ? {} : { eta_seconds: eta };
}

/** FFHub sends durations as strings of seconds with two decimals ("215.30"); so do we. */
function seconds(ms: number): string {
  return (Math.max(0, Math.round(ms / 10)) / 100).toFixed(2);
}
