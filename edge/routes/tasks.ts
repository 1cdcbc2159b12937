import { createRoute, z } from "@hono/zod-openapi";
import { randomHex } from "../../shared/encoding";
import { AppError } from "../../shared/errors";
import { checkCommand } from "../../shared/ffmpeg";
import { CreateTaskSchema, CreatedTaskSchema, ListTasksQuerySchema, PublicTaskSchema, TaskListSchema, TaskSchema, TaskIdParamSchema } from "../../shared/schemas/tasks";
import { startOfUtcDay } from "../accounts/usage";
import { allowAnonymousTaskRead, requireApiKey } from "../lib/auth";
import { config } from "../lib/config";
import { idempotency } from "../lib/idempotency";
import { bearerSecurity, createApp, pageRoute, problemResponses } from "../lib/openapi";
import { presentPublicTask, presentTask } from "../tasks/present";
import { findTaskById, insertTaskWithinQuota, listTasks, requireOwnTask } from "../tasks/repository";
import { isFinal } from "../tasks/state";
import { checkWebhookUrl } from "../webhooks/url";
import { taskStub } from "../lib/stubs";
import { liveState } from "../tasks/live-state";
import { queueJobs } from "../dispatch/jobs-queue";

/** The transcoding API: `{base_url}/tasks`. */
export const tasks = createApp();
tasks.use("/v1/tasks/:task_id", allowAnonymousTaskRead);
tasks.use("/v1/tasks", requireApiKey);
tasks.use("/v1/tasks/*", requireApiKey);
tasks.use("/v1/tasks", idempotency());

tasks.openapi(
  createRoute({
    method: "post", path: "/v1/tasks", tags: ["Tasks"], summary: "Submit an ffmpeg command as a task", security: bearerSecurity,
    request: { body: { required: true, content: { "application/json": { schema: CreateTaskSchema } } } },
    responses: {
      201: { description: "The task was accepted and queued", content: { "application/json": { schema: CreatedTaskSchema } } },
      ...problemResponses,
      413: { description: "The command is too long" },
      429: { description: "RATE_LIMITED, or QUOTA_EXCEEDED: less than a second of today's DAILY_TASK_SECONDS is left once the unfinished tasks' time limits are reserved (Retry-After: until 00:00 UTC; sooner if a task ends under its limit)" },
    },
  }),
  async (c) => {
    const body = c.req.valid("json");
    const allowHosts = config(c.env).devFetchAllowHosts;
    checkCommand(body.command, { allowHosts });
    const webhook = body.webhook ? checkWebhookUrl(body.webhook, allowHosts).toString() : null;
    const userId = c.get("userId");
    const taskId = `tsk_${randomHex(12)}`;
    const createdAt = new Date().toISOString();
    const settings = config(c.env);
    const quota = { since: startOfUtcDay(new Date(createdAt)), seconds: settings.dailyTaskSeconds, taskTimeoutSeconds: settings.taskTimeoutSeconds, requestedSeconds: body.timeout_seconds };
    const row = { id: taskId, user_id: userId, command: body.command, with_metadata: body.with_metadata ? 1 : 0, webhook_url: webhook, created_at: createdAt };
    const timeLimit = await insertTaskWithinQuota(c.env.DB, row, quota);
    if (timeLimit === undefined) throw quotaExceeded(quota.seconds, new Date(createdAt));
    const task = taskStub(c.env, taskId);
    const job = { task_id: taskId, user_id: userId, created_at: createdAt };
    await task.init({ ...job, time_limit_seconds: timeLimit }, { command: body.command, with_metadata: body.with_metadata === true, webhook_url: webhook });
    try {
      await queueJobs(c.env, [job]);
    } catch (error) {
      await task.failTask("DISPATCH_FAILED", "The task could not be queued.");
      throw error;
    }
    return c.json({ task_id: taskId, status: "pending" as const, created_at: createdAt }, 201);
  },
);

tasks.openapi(
  createRoute({
    method: "post", path: "/v1/tasks/validate", tags: ["Tasks"], summary: "Check a command against the policy without running it", security: bearerSecurity,
    request: { body: { required: true, content: { "application/json": { schema: CreateTaskSchema.pick({ command: true }) } } } },
    responses: {
      200: { description: "The command would be accepted", content: { "application/json": { schema: z.object({ valid: z.literal(true), inputs: z.array(z.string()), outputs: z.array(z.string()) }) } } },
      ...problemResponses,
    },
  }),
  async (c) => {
    const parsed = checkCommand(c.req.valid("json").command, { allowHosts: config(c.env).devFetchAllowHosts });
    return c.json({ valid: true as const, inputs: parsed.inputs.map((input) => input.url), outputs: parsed.outputs.map((output) => output.filename) }, 200);
  },
);

tasks.openapi(
  pageRoute({ path: "/v1/tasks", tag: "Tasks", summary: "The caller's tasks, newest first", description: "A page of tasks", query: ListTasksQuerySchema, page: TaskListSchema }),
  async (c) => {
    const query = c.req.valid("query");
    const { total, rows } = await listTasks(c.env.DB, c.get("userId"), query);
    const page = await Promise.all(rows.map(async (row) => presentTask(c.env, row, isFinal(row.status) ? undefined : await liveState(c.env, row.id))));
    return c.json({ total, tasks: page }, 200);
  },
);

tasks.openapi(
  createRoute({
    method: "get", path: "/v1/tasks/{task_id}", tags: ["Tasks"], summary: "A task's status, progress, outputs or error",
    description:
      "Also served without a key, by id alone, for FFHub's clients: then only status, progress, outputs, the failure's code and the timings (a PublicTask), never the command, its inputs or ffmpeg's messages. The operator turns that off with PUBLIC_TASK_STATUS=\"false\".",
    security: [...bearerSecurity, {}],
    request: { params: TaskIdParamSchema },
    responses: {
      200: { description: "The task; a PublicTask to a request without a key", content: { "application/json": { schema: z.union([TaskSchema, PublicTaskSchema]) } } },
      ...problemResponses,
      404: { description: "No such task for this key" },
    },
  }),
  async (c) => {
    const { task_id } = c.req.valid("param");
    const userId = c.get("userId");
    const row = userId ? await requireOwnTask(c.env.DB, userId, task_id) : await findTaskById(c.env.DB, task_id);
    if (!row) throw new AppError("NOT_FOUND", `There is no task '${task_id}'.`);
    const live = isFinal(row.status) ? undefined : await liveState(c.env, task_id);
    const task = presentTask(c.env, row, live);
    return c.json(userId ? task : presentPublicTask(task), 200);
  },
);

/**
 * DAILY_TASK_SECONDS of processing per user and UTC day (GET /v1/me's remaining_credits) are
 * used up or reserved by unfinished tasks: the insert refused the task.
 */
function quotaExceeded(quota: number, now: Date): AppError {
  const retryAfter = Math.max(1, Math.ceil((Date.parse(startOfUtcDay(now)) + 86_400_000 - now.getTime()) / 1000));
  return new AppError(
    "QUOTA_EXCEEDED",
    `Today's ${quota} s of processing are used up or held by your unfinished tasks (each holds its time limit until it ends); new tasks are accepted again when one ends under its limit, or at 00:00 UTC.`,
    { retry_after: retryAfter },
  ).withHeaders({ "Retry-After": String(retryAfter) });
}
