import { JOB_LOG_MAX_BYTES } from "../../shared/schemas/jobs";
import { logKey } from "./outputs";
import type { LiveState } from "./state";

const LOG_METADATA = { httpMetadata: { contentType: "text/plain; charset=utf-8" } };

/** ffmpeg's stderr of the task, capped; kept as long as the task. */
export async function storeLog(env: Env, userId: string, taskId: string, text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  // Keep the end: that is where ffmpeg says what went wrong.
  const kept = bytes.byteLength > JOB_LOG_MAX_BYTES ? bytes.subarray(bytes.byteLength - JOB_LOG_MAX_BYTES) : bytes;
  await env.FILES.put(logKey(userId, taskId), kept, LOG_METADATA);
}

/**
 * The log a canceled task keeps until its transcoder sends ffmpeg's own (which replaces it), and
 * for good when ffmpeg never ran: GET /v1/tasks/{id}/logs then says why it is empty instead of
 * answering 404. Written before the transcoder is told to stop, so ffmpeg's log always comes
 * after; a log already there (a run that ended as the cancel came) is ffmpeg's and is kept.
 */
export async function writeCancelNote(env: Env, userId: string, state: Pick<LiveState, "task_id" | "started_at">): Promise<void> {
  if (await env.FILES.head(logKey(userId, state.task_id))) return;
  const note = state.started_at
    ? "[ffedge] The task was canceled at the user's request before ffmpeg wrote anything.\n"
    : "[ffedge] The task was canceled before it started; ffmpeg never ran.\n";
  await env.FILES.put(logKey(userId, state.task_id), note, LOG_METADATA);
}
