import { createRoute, z } from "@hono/zod-openapi";
import { AppError, ProblemSchema } from "../../shared/errors";
import { checkCommand } from "../../shared/ffmpeg";
import { CreateTaskSchema, CreatedTaskSchema, ListTasksQuerySchema, PublicTaskSchema, TaskListSchema, TaskSchema, TaskIdParamSchema } from "../../shared/schemas/tasks";
import { allowAnonymousTaskRead, requireApiKey } from "../accounts/credentials";
import { config } from "../lib/config";
import { idempotency } from "../lib/idempotency";
import { bearerSecurity, createApp, pageRoute, problemResponses } from "../lib/openapi";
import { presentPublicTask, presentTask } from "../tasks/present";
import { findTaskById, listTasks, requireOwnTask } from "../tasks/repository";
import { isFinal } from "../tasks/state";
import { liveState } from "../tasks/live-state";
import { submitTask } from "../tasks/submit";

/** The transcoding API: `{base_url}/tasks`. */
export const tasks = createApp();
tasks.use("/v1/tasks/:task_id", allowAnonymousTaskRead);
tasks.use("/v1/tasks", requireApiKey);
tasks.use("/v1/tasks/*", requireApiKey);
tasks.use("/v1/tasks", idempotency());

const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: ProblemSchema } } });

tasks.openapi(
  createRoute({
    method: "post", path: "/v1/tasks", tags: ["Tasks"], summary: "Submit an ffmpeg command as a task", security: bearerSecurity,
    request: { body: { required: true, content: { "application/json": { schema: CreateTaskSchema } } } },
    responses: {
      201: { description: "The task was accepted and queued", content: { "application/json": { schema: CreatedTaskSchema } } },
      ...problemResponses,
      400: problem(
        "Nothing was recorded. VALIDATION_FAILED (the body; `issues` name the members) or INVALID_JSON; a policy code naming the word at fault in `token` (a chain of steps: the step in `step`, STEP_REFERENCE_INVALID for a bad reference); PRESET_PARAMS_INVALID (`param`, `preset`); DESTINATION_NOT_FOUND (`destination`); URL_NOT_ALLOWED or URL_HOST_BLOCKED for the webhook",
      ),
      404: problem("PRESET_NOT_FOUND: no built-in preset and none of yours has that name or id (`preset` names it)"),
      409: problem("IDEMPOTENCY_KEY_REUSED: the Idempotency-Key was used with another body; IDEMPOTENCY_KEY_IN_PROGRESS: the first request with it has not finished"),
      413: problem("COMMAND_TOO_LONG: the command (or a step's) is too long; PAYLOAD_TOO_LARGE: the body is over the JSON body limit"),
      429: problem("RATE_LIMITED, or QUOTA_EXCEEDED: less than a second of today's DAILY_TASK_SECONDS is left once the unfinished tasks' time limits are reserved (Retry-After: until 00:00 UTC; sooner if a task ends under its limit)"),
    },
  }),
  async (c) => c.json(await submitTask(c.env, c.get("userId"), c.req.valid("json")), 201),
);

tasks.openapi(
  createRoute({
    method: "post", path: "/v1/tasks/validate", tags: ["Tasks"], summary: "Check a command against the policy without running it", security: bearerSecurity,
    request: { body: { required: true, content: { "application/json": { schema: CreateTaskSchema.pick({ command: true }).required() } } } },
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
