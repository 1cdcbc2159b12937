import { createRoute } from "@hono/zod-openapi";
import { ProblemSchema } from "../../shared/errors";
import { RetriedTaskSchema, TaskBatchEnvelopeSchema, TaskBatchResultSchema, TaskBatchSchema } from "../../shared/schemas/batch";
import { TaskIdParamSchema } from "../../shared/schemas/tasks";
import { requireApiKey } from "../accounts/credentials";
import { idempotency } from "../lib/idempotency";
import { bearerSecurity, createApp, problemResponses } from "../lib/openapi";
import { submitBatch } from "../tasks/batch";
import { retryTask } from "../tasks/retry";

/** Submitting tasks other than one command at a time: a batch of them, or a finished task again. */
export const taskBatch = createApp();
taskBatch.use("/v1/tasks/batch", requireApiKey, idempotency());
taskBatch.use("/v1/tasks/:task_id/retry", requireApiKey, idempotency());

const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: ProblemSchema } } });

const batchRoute = createRoute({
  method: "post", path: "/v1/tasks/batch", tags: ["Tasks"], summary: "Submit up to 100 tasks in one request", security: bearerSecurity,
  description:
    "Each item is submitted as POST /v1/tasks would submit it, in order, so the daily quota is taken item by item. The answer is 200 whenever the batch was read, with one result per item: the created task, or the problem that refused the item (`error.pointer` names it); a refused item never blocks the others. Only a body that is not a batch (no `tasks` array, 0 or more than 100 items) is refused whole. With an Idempotency-Key a repeat answers the same results and creates nothing.",
  request: { body: { required: true, content: { "application/json": { schema: TaskBatchSchema } } } },
  responses: {
    200: { description: "Every item's result, in order", content: { "application/json": { schema: TaskBatchResultSchema } } },
    ...problemResponses,
    409: problem("IDEMPOTENCY_KEY_REUSED or IDEMPOTENCY_KEY_IN_PROGRESS"),
    413: problem("PAYLOAD_TOO_LARGE: the body is over the JSON body limit"),
  },
});

// The document shows every item as a CreateTask; the route itself checks only the envelope, so
// that one malformed item is refused in its own result rather than failing the whole batch.
taskBatch.openAPIRegistry.registerPath(batchRoute);
taskBatch.openapi(
  { ...batchRoute, hide: true, request: { body: { required: true, content: { "application/json": { schema: TaskBatchEnvelopeSchema } } } } },
  async (c) => c.json(await submitBatch(c.env, c.get("userId"), c.req.valid("json").tasks), 200),
);

taskBatch.openapi(
  createRoute({
    method: "post", path: "/v1/tasks/{task_id}/retry", tags: ["Tasks"], summary: "Run a finished task again as a new task", security: bearerSecurity,
    description:
      "A completed or failed (canceled included) task runs again as a new task with the same command, with_metadata, webhook and time limit (after a TIMEOUT, the default limit), submitted like POST /v1/tasks (policy, quota). The old task is left as it was. An input that is one of this service's files (an upload or an output) that has expired or was deleted refuses the retry with INPUT_EXPIRED naming it: upload it again and submit a new task.",
    request: { params: TaskIdParamSchema },
    responses: {
      201: { description: "The new task, queued; Location is its URL", content: { "application/json": { schema: RetriedTaskSchema } } },
      ...problemResponses,
      404: problem("No such task for this key"),
      409: problem("TASK_NOT_FINISHED: the task is pending or running; INPUT_EXPIRED: one of its inputs, a file of this service, is gone; DESTINATION_GONE: the destination it delivered to was deleted since; IDEMPOTENCY_KEY_REUSED"),
      429: problem("RATE_LIMITED or QUOTA_EXCEEDED, as for POST /v1/tasks"),
    },
  }),
  async (c) => {
    const task = await retryTask(c.env, c.get("userId"), c.req.valid("param").task_id);
    return c.json(task, 201, { Location: `/v1/tasks/${task.task_id}` });
  },
);
