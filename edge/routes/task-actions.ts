import { createRoute, z } from "@hono/zod-openapi";
import { AppError } from "../../shared/errors";
import { TaskEventSchema, TaskSchema, TaskIdParamSchema } from "../../shared/schemas/tasks";
import { requireApiKey, socketUntilCredentialEnds, untilCredentialEnds } from "../accounts/credentials";
import { bearerSecurity, createApp, problemResponses } from "../lib/openapi";
import { watcherUpgrade } from "../tasks/fan-out";
import { discardTaskFiles, logKey } from "../tasks/outputs";
import { presentTask } from "../tasks/present";
import { deleteTaskRecords, requireOwnTask } from "../tasks/repository";
import { isFinal } from "../tasks/state";
import { taskStub } from "../lib/stubs";
import { cancelTask } from "../tasks/live-state";

const taskResponses = { ...problemResponses, 404: { description: "No such task for this key" } };

/** What can be done to one task besides reading it: watch, cancel, read its log, delete it. */
export const taskActions = createApp();
taskActions.use("/v1/tasks/:task_id/*", requireApiKey);
taskActions.use("/v1/tasks/:task_id", requireApiKey);

taskActions.openapi(
  createRoute({
    method: "get", path: "/v1/tasks/{task_id}/events", tags: ["Tasks"], security: bearerSecurity,
    summary: "Live progress as Server-Sent Events (or a WebSocket with Upgrade: websocket)",
    description: "Events `status` (the current state, first), `progress`, then `completed` or `failed`, after which the stream ends. Each `data` is a TaskEvent.",
    request: { params: TaskIdParamSchema },
    responses: { 200: { description: "An event stream", content: { "text/event-stream": { schema: TaskEventSchema } } }, ...taskResponses },
  }),
  async (c) => {
    const { task_id } = c.req.valid("param");
    await requireOwnTask(c.env.DB, c.get("userId"), task_id);
    const task = taskStub(c.env, task_id);
    if (c.req.header("upgrade")?.toLowerCase() === "websocket") return socketUntilCredentialEnds(c, await task.fetch(watcherUpgrade(c.req.raw, c.get("credential"))));
    return new Response(untilCredentialEnds(c, await task.watch()), {
      headers: { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache, no-transform", "x-accel-buffering": "no" },
    }) as never;
  },
);

taskActions.openapi(
  createRoute({
    method: "post", path: "/v1/tasks/{task_id}/cancel", tags: ["Tasks"], security: bearerSecurity,
    summary: "Cancel a pending or running task",
    description:
      "A pending task never starts; a running task's ffmpeg is stopped. Either way the task ends `failed` with `error_code: CANCELED` and `canceled_at`, and keeps its log: what ffmpeg wrote until it was stopped, or a line saying it never ran.",
    request: { params: TaskIdParamSchema },
    responses: { 200: { description: "The canceled task", content: { "application/json": { schema: TaskSchema } } }, ...taskResponses, 409: { description: "The task has already finished" } },
  }),
  async (c) => {
    const { task_id } = c.req.valid("param");
    const row = await requireOwnTask(c.env.DB, c.get("userId"), task_id);
    const result = await cancelTask(c.env, task_id);
    if (!result.canceled) throw new AppError("TASK_NOT_RUNNABLE", `Task '${task_id}' has already finished (${result.state?.status ?? row.status}); there is nothing to cancel.`);
    // The row still says pending/running; the live state carries the end just written to D1.
    return c.json(presentTask(c.env, row, result.state), 200);
  },
);

taskActions.openapi(
  createRoute({
    method: "get", path: "/v1/tasks/{task_id}/logs", tags: ["Tasks"], security: bearerSecurity,
    summary: "ffmpeg's output (stderr) for the task, capped at 256 KiB",
    description: "Available once the task has ended. A canceled task's log holds what ffmpeg wrote until it was stopped, then a line saying so; one canceled before ffmpeg ran holds only that line.",
    request: { params: TaskIdParamSchema },
    responses: { 200: { description: "The log", content: { "text/plain": { schema: z.string() } } }, ...taskResponses },
  }),
  async (c) => {
    const { task_id } = c.req.valid("param");
    const row = await requireOwnTask(c.env.DB, c.get("userId"), task_id);
    const log = await c.env.FILES.get(logKey(row.user_id, task_id));
    if (!log) throw new AppError("NOT_FOUND", isFinal(row.status) ? `Task '${task_id}' has no log.` : `Task '${task_id}' has not produced a log yet; it is available once the task ends.`);
    return new Response(log.body, { headers: { "content-type": "text/plain; charset=utf-8", "x-content-type-options": "nosniff" } }) as never;
  },
);

taskActions.openapi(
  createRoute({
    method: "delete", path: "/v1/tasks/{task_id}", tags: ["Tasks"], security: bearerSecurity,
    summary: "Delete a finished task, its outputs and its log",
    request: { params: TaskIdParamSchema },
    responses: { 204: { description: "Deleted" }, ...taskResponses, 409: { description: "The task has not finished; cancel it first" } },
  }),
  async (c) => {
    const { task_id } = c.req.valid("param");
    const userId = c.get("userId");
    const row = await requireOwnTask(c.env.DB, userId, task_id);
    if (!isFinal(row.status)) throw new AppError("TASK_NOT_FINISHED", `Task '${task_id}' is ${row.status}; cancel it before deleting it.`);
    await discardTaskFiles(c.env, userId, task_id, true);
    await deleteTaskRecords(c.env.DB, userId, task_id);
    await taskStub(c.env, task_id).destroy();
    return c.body(null, 204);
  },
);
