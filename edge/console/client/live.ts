import { API, taskPath } from "./api";
import type { TaskEvent } from "./types";

interface TaskStreamHandlers {
  /** A status or progress event. */
  update(event: TaskEvent): void;
  /** The task ended; the stream is closed. */
  end(event: TaskEvent, outcome: "completed" | "failed"): void;
  /** The stream broke off (a network error, a restart of the edge); it is closed. */
  lost(): void;
}

/** Follows one task's event stream (GET /v1/tasks/{task_id}/events, through the session). */
export function followTaskEvents(taskId: string, handlers: TaskStreamHandlers): EventSource {
  const source = new EventSource(`${API}${taskPath(taskId)}/events`);
  const read = (event: Event) => JSON.parse((event as MessageEvent<string>).data) as TaskEvent;
  source.addEventListener("status", (event) => handlers.update(read(event)));
  source.addEventListener("progress", (event) => handlers.update(read(event)));
  for (const outcome of ["completed", "failed"] as const) {
    source.addEventListener(outcome, (event) => {
      source.close();
      handlers.end(read(event), outcome);
    });
  }
  source.onerror = () => {
    source.close();
    handlers.lost();
  };
  return source;
}
