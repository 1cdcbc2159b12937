import { createRoute } from "@hono/zod-openapi";
import { RedeliveryResultSchema } from "../../shared/schemas/destinations";
import { TaskIdParamSchema } from "../../shared/schemas/tasks";
import { requireApiKey } from "../accounts/credentials";
import { bearerSecurity, createApp, problemResponses } from "../lib/openapi";
import { redeliverOutputs } from "../tasks/deliveries";

/** A completed task's deliveries to the user's destination, made again (docs/destinations.md). */
export const taskDeliveries = createApp();
const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } });
taskDeliveries.use("/v1/tasks/:task_id/deliveries/retry", requireApiKey);

taskDeliveries.openapi(
  createRoute({
    method: "post", path: "/v1/tasks/{task_id}/deliveries/retry", tags: ["Tasks", "Destinations"], summary: "Deliver the outputs whose delivery failed again", security: bearerSecurity,
    description:
      "Every output of the task whose `destination.status` is `failed` and whose copy on ffedge has not expired goes back to `pending` with its attempts counted from 0, and is delivered again as after the task completed (the same retries), with the destination's credentials and prefix as they are stored now: fix the destination (PATCH /v1/destinations/{id}), then call this. Outputs already delivered or still pending are left alone. Repeating the call while they are pending queues nothing more (409).",
    request: { params: TaskIdParamSchema },
    responses: {
      202: { description: "The outputs queued for delivery (and in `expired` those that failed but can no longer be delivered); poll GET /v1/tasks/{task_id} until none is `pending`", content: { "application/json": { schema: RedeliveryResultSchema } } },
      ...problemResponses,
      404: problem("No such task for this key"),
      409: problem("TASK_NOT_FINISHED: the task has not ended; NOTHING_TO_REDELIVER: no delivery failed (none was asked, all were delivered or are still pending) or the outputs whose delivery failed have expired (`expired` names them); DESTINATION_GONE: the task's destination was deleted since (`destination` names it)"),
    },
  }),
  async (c) => c.json(await redeliverOutputs(c.env, c.get("userId"), c.req.valid("param").task_id), 202),
);
