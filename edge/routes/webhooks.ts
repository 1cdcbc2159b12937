import { createRoute, z } from "@hono/zod-openapi";
import { AppError } from "../../shared/errors";
import { TaskIdParamSchema } from "../../shared/schemas/tasks";
import { RedeliveryQueuedSchema, WebhookDeliveryListSchema, WebhookEventSchema, WebhookEventTypeSchema, WebhookSecretSchema } from "../../shared/schemas/webhooks";
import { requireApiKey } from "../accounts/credentials";
import { bearerSecurity, createApp, problemResponses } from "../lib/openapi";
import { requireOwnTask } from "../tasks/repository";
import { handoverFor, taskEvent } from "../tasks/webhook-event";
import { listDeliveries } from "../webhooks/delivery";
import { handOver } from "../webhooks/handover";
import { rotateSecret } from "../webhooks/signing";

const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } });

/** A task's webhook log and redelivery, and the caller's signing secret. */
export const webhooks = createApp();
webhooks.use("/v1/tasks/:task_id/webhooks", requireApiKey);
webhooks.use("/v1/tasks/:task_id/webhooks/*", requireApiKey);
webhooks.use("/v1/webhook-secret/*", requireApiKey);

webhooks.openapi(
  createRoute({
    method: "get", path: "/v1/tasks/{task_id}/webhooks", tags: ["Webhooks"], summary: "Every attempt to deliver the task's webhook", security: bearerSecurity,
    request: { params: TaskIdParamSchema },
    responses: {
      200: { description: "The task's webhook and its delivery attempts, oldest first", content: { "application/json": { schema: WebhookDeliveryListSchema } } },
      ...problemResponses,
      404: problem("No such task for this key"),
    },
  }),
  async (c) => {
    const { task_id } = c.req.valid("param");
    const row = await requireOwnTask(c.env.DB, c.get("userId"), task_id);
    const event = row.webhook_url ? taskEvent(c.env, row) : undefined;
    return c.json({ webhook_url: row.webhook_url, webhook_id: event?.id ?? null, deliveries: await listDeliveries(c.env.DB, task_id) }, 200);
  },
);

webhooks.openapi(
  createRoute({
    method: "post", path: "/v1/tasks/{task_id}/webhooks/redeliver", tags: ["Webhooks"], summary: "Send a finished task's event again (one attempt)", security: bearerSecurity,
    request: { params: TaskIdParamSchema },
    responses: {
      202: { description: "The event is handed to its receiver's delivery line; the attempt appears in the task's webhook log", content: { "application/json": { schema: RedeliveryQueuedSchema } } },
      ...problemResponses,
      404: problem("No such task for this key"),
      409: problem("The task has not finished (TASK_NOT_FINISHED) or has no webhook (WEBHOOK_NOT_CONFIGURED)"),
    },
  }),
  async (c) => {
    const { task_id } = c.req.valid("param");
    const row = await requireOwnTask(c.env.DB, c.get("userId"), task_id);
    if (!row.webhook_url) throw new AppError("WEBHOOK_NOT_CONFIGURED", `Task '${task_id}' was submitted without a webhook.`);
    const handover = handoverFor(c.env, row, true);
    if (!handover) throw new AppError("TASK_NOT_FINISHED", `Task '${task_id}' is ${row.status}; its event is sent when it completes or fails.`);
    await handOver(c.env, handover);
    return c.json({ webhook_id: handover.event.id, queued: true as const }, 202);
  },
);

webhooks.openapi(
  createRoute({
    method: "post", path: "/v1/webhook-secret/rotate", tags: ["Webhooks"], security: bearerSecurity,
    summary: "Create a new webhook signing secret, shown only in this response",
    description:
      "The first call creates the secret deliveries are signed with (until then the service uses one that is never shown). " +
      "Each later call replaces it; the replaced secret keeps signing, alongside the new one, for 24 hours.",
    responses: {
      200: { description: "The new secret", content: { "application/json": { schema: WebhookSecretSchema } } },
      ...problemResponses,
    },
  }),
  async (c) => {
    c.header("cache-control", "no-store");
    return c.json(await rotateSecret(c.env, c.get("userId")), 200);
  },
);

const signatureHeaders = z.object({
  "webhook-id": z.string().openapi({ example: "msg_tsk_0123456789abcdef01234567_completed", description: "The same on every retry and redelivery of an event" }),
  "webhook-timestamp": z.string().openapi({ example: "1767225600", description: "Unix seconds of this attempt" }),
  "webhook-signature": z.string().openapi({ example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=", description: "Space-separated v1 signatures, one per valid secret" }),
  "webhook-event": WebhookEventTypeSchema.openapi({ description: "The event type; the body is the task object" }),
});
for (const type of ["task.completed", "task.failed"] as const) {
  webhooks.openAPIRegistry.registerWebhook({
    method: "post", path: type, tags: ["Webhooks"], summary: `Sent to the task's webhook URL when it ${type.slice(5)}`,
    request: { headers: signatureHeaders, body: { content: { "application/json": { schema: WebhookEventSchema } } } },
    responses: { 200: { description: "Any 2xx acknowledges the event; anything else, a redirect or no answer within 15 s is retried" } },
  });
}
