import { logKey } from "./outputs";
import type { LiveState } from "./state";

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
  await env.FILES.put(logKey(userId, state.task_id), note, { httpMetadata: { contentType: "text/plain; charset=utf-8" } });
}
