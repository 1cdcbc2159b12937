import type { Task } from "../../shared/schemas/tasks";
import { publicUrls } from "../files/records";
import { outputKey } from "./outputs";
import type { TaskRow } from "./repository";
import { type LiveState, type StoredOutput, isFinal } from "./state";

/** The API's view of a task: the D1 record, overlaid with the live state while it runs. */
export function presentTask(env: Env, row: TaskRow, live?: LiveState, now = Date.now()): Task {
  const status = live && !isFinal(row.status) ? live.status : row.status;
  const startedAt = row.started_at ?? live?.started_at ?? null;
  const finishedAt = row.finished_at ?? (live && isFinal(live.status) ? live.finished_at : null);
  const outputs: StoredOutput[] | null = row.outputs ? JSON.parse(row.outputs) : live?.status === "completed" ? live.outputs : null;
  const end = finishedAt ? Date.parse(finishedAt) : now;
  const task: Task = {
    task_id: row.id,
    status,
    progress: status === "completed" ? 100 : Math.min(99, Math.floor(live && !isFinal(row.status) ? live.progress : row.progress)),
    command: row.command,
    with_metadata: row.with_metadata === 1,
    created_at: row.created_at,
    started_at: startedAt,
    finished_at: finishedAt,
    elapsed: startedAt ? seconds(end - Date.parse(startedAt)) : null,
    total_elapsed: seconds(end - Date.parse(row.created_at)),
  };
  if (status === "completed" && outputs) {
    task.outputs = outputs.map((output) => ({
      filename: output.filename,
      url: publicUrls(env, outputKey(row.user_id, row.id, output.filename)).url,
      size: output.size,
      ...(row.with_metadata === 1 && output.metadata ? { metadata: output.metadata } : {}),
    }));
  }
  if (status === "failed") {
    task.error = row.error ?? live?.error ?? "The task failed.";
    const code = row.error_code ?? live?.error_code;
    if (code) task.error_code = code;
  }
  return task;
}

function seconds(ms: number): number {
  return Math.max(0, Math.round(ms / 10) / 100);
}
