import { createRoute, type z } from "@hono/zod-openapi";
import { AppError } from "../../shared/errors";
import {
  EndpointDeliveryLogSchema, EndpointEventParamSchema, EndpointIdParamSchema, FileExpiredEventSchema, RedeliveryQueuedSchema, WebhookEndpointCreateSchema,
  WebhookEndpointCreatedSchema, WebhookEndpointListSchema, WebhookEndpointSchema, WebhookEndpointUpdateSchema, WebhookEventSchema, WebhookSecretSchema,
} from "../../shared/schemas/webhooks";
import { requireApiKey } from "../accounts/credentials";
import { bearerSecurity, createApp, problemResponses } from "../lib/openapi";
import { listEndpointEvents } from "../webhooks/endpoint-log";
import { createEndpoint, deleteEndpoint, listEndpoints, requireOwnEndpoint, rotateEndpointSecret, updateEndpoint } from "../webhooks/endpoints";
import { redeliverEndpointEvent } from "../webhooks/handover";

const problem = (description: string) => ({ description, content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } } });
const json = <T extends z.ZodType>(description: string, schema: T) => ({ description, content: { "application/json": { schema } } });
const notFound = { 404: problem("No such endpoint for this key (another user's included)") };
const body = <T extends z.ZodType>(schema: T) => ({ body: { required: true, content: { "application/json": { schema } } } });
const TAGS = ["Webhook endpoints"];
const BASE = "/v1/webhooks/endpoints";

/** Webhook endpoints a user registers once: events of all their tasks (and files) go there, signed with the endpoint's own secret. */
export const webhookEndpoints = createApp();
webhookEndpoints.use(BASE, requireApiKey);
webhookEndpoints.use(`${BASE}/*`, requireApiKey);

webhookEndpoints.openapi(
  createRoute({
    method: "post", path: BASE, tags: TAGS, security: bearerSecurity, summary: "Register a webhook endpoint; its signing secret is shown only in this response",
    description: "The URL must be https on a public host, as a task's webhook. At most 20 endpoints per user (ENDPOINT_LIMIT_REACHED).",
    request: body(WebhookEndpointCreateSchema),
    responses: { 201: json("The endpoint, with its secret", WebhookEndpointCreatedSchema), ...problemResponses, 409: problem("The user has 20 endpoints already (ENDPOINT_LIMIT_REACHED)") },
  }),
  async (c) => {
    c.header("cache-control", "no-store");
    return c.json(await createEndpoint(c.env, c.get("userId"), c.req.valid("json")), 201);
  },
);

webhookEndpoints.openapi(
  createRoute({ method: "get", path: BASE, tags: TAGS, security: bearerSecurity, summary: "Your webhook endpoints, oldest first", responses: { 200: json("The endpoints (never their secrets)", WebhookEndpointListSchema), ...problemResponses } }),
  async (c) => c.json({ endpoints: await listEndpoints(c.env.DB, c.get("userId")) }, 200),
);

webhookEndpoints.openapi(
  createRoute({
    method: "get", path: `${BASE}/{endpoint_id}`, tags: TAGS, security: bearerSecurity, summary: "One webhook endpoint",
    request: { params: EndpointIdParamSchema }, responses: { 200: json("The endpoint", WebhookEndpointSchema), ...problemResponses, ...notFound },
  }),
  async (c) => c.json(await requireOwnEndpoint(c.env.DB, c.get("userId"), c.req.valid("param").endpoint_id), 200),
);

webhookEndpoints.openapi(
  createRoute({
    method: "patch", path: `${BASE}/{endpoint_id}`, tags: TAGS, security: bearerSecurity, summary: "Change an endpoint's URL, events, description, or enable or disable it",
    description: "A disabled endpoint is sent nothing; events already waiting for it are dropped at their next attempt, with the reason in its log.",
    request: { params: EndpointIdParamSchema, ...body(WebhookEndpointUpdateSchema) },
    responses: { 200: json("The endpoint as changed", WebhookEndpointSchema), ...problemResponses, ...notFound },
  }),
  async (c) => c.json(await updateEndpoint(c.env, c.get("userId"), c.req.valid("param").endpoint_id, c.req.valid("json")), 200),
);

webhookEndpoints.openapi(
  createRoute({
    method: "delete", path: `${BASE}/{endpoint_id}`, tags: TAGS, security: bearerSecurity, summary: "Delete an endpoint, its secrets and its delivery log",
    request: { params: EndpointIdParamSchema }, responses: { 204: { description: "Deleted" }, ...problemResponses, ...notFound },
  }),
  async (c) => {
    await deleteEndpoint(c.env.DB, c.get("userId"), c.req.valid("param").endpoint_id);
    return c.body(null, 204);
  },
);

webhookEndpoints.openapi(
  createRoute({
    method: "post", path: `${BASE}/{endpoint_id}/rotate-secret`, tags: TAGS, security: bearerSecurity, summary: "Replace the endpoint's signing secret, shown only in this response",
    description: "The replaced secret keeps signing, alongside the new one, for 24 hours.",
    request: { params: EndpointIdParamSchema }, responses: { 200: json("The new secret", WebhookSecretSchema), ...problemResponses, ...notFound },
  }),
  async (c) => {
    c.header("cache-control", "no-store");
    return c.json(await rotateEndpointSecret(c.env, c.get("userId"), c.req.valid("param").endpoint_id), 200);
  },
);

webhookEndpoints.openapi(
  createRoute({
    method: "get", path: `${BASE}/{endpoint_id}/deliveries`, tags: TAGS, security: bearerSecurity, summary: "The endpoint's last 100 events, each with every attempt to deliver it",
    request: { params: EndpointIdParamSchema }, responses: { 200: json("Newest event first; attempts oldest first", EndpointDeliveryLogSchema), ...problemResponses, ...notFound },
  }),
  async (c) => {
    const { endpoint_id } = c.req.valid("param");
    await requireOwnEndpoint(c.env.DB, c.get("userId"), endpoint_id);
    return c.json({ events: await listEndpointEvents(c.env.DB, endpoint_id) }, 200);
  },
);

webhookEndpoints.openapi(
  createRoute({
    method: "post", path: `${BASE}/{endpoint_id}/deliveries/{event_id}/redeliver`, tags: TAGS, security: bearerSecurity, summary: "Send one of the endpoint's events again (one attempt)",
    request: { params: EndpointEventParamSchema },
    responses: {
      202: json("Handed to the endpoint's delivery line; the attempt appears in its log", RedeliveryQueuedSchema), ...problemResponses, 404: problem("No such endpoint, or no such event in its log"),
      409: problem("ENDPOINT_DISABLED: the endpoint is disabled; nothing was queued"),
    },
  }),
  async (c) => {
    const { endpoint_id, event_id } = c.req.valid("param");
    const endpoint = await requireOwnEndpoint(c.env.DB, c.get("userId"), endpoint_id);
    if (!(await redeliverEndpointEvent(c.env, endpoint, event_id))) throw new AppError("NOT_FOUND", `Endpoint '${endpoint_id}' has no event '${event_id}' in its log.`);
    return c.json({ webhook_id: event_id, queued: true as const }, 202);
  },
);

webhookEndpoints.openAPIRegistry.registerWebhook({
  method: "post", path: "file.expired", tags: TAGS, summary: "Sent to the endpoints subscribed to it when a stored file expires and is deleted",
  request: { body: { content: { "application/json": { schema: FileExpiredEventSchema } } } },
  responses: { 200: { description: "Any 2xx acknowledges the event; anything else is retried for 24 h" } },
});

webhookEndpoints.openAPIRegistry.registerWebhook({
  method: "post", path: "task.progress", tags: TAGS,
  summary: "Sent to the endpoints subscribed to it while a task runs: the task as GET /v1/tasks/{task_id} shows it (status running, progress, eta_seconds)",
  description:
    "At most one per 10 points of progress or per 10 s, whichever comes first, and none after the task's task.completed or task.failed went to the endpoint. " +
    "A newer one replaces one not yet sent; each is tried once (a failure is logged, not retried). The webhook-id is msg_<task_id>_progress_<n>, n counting up.",
  request: { body: { content: { "application/json": { schema: WebhookEventSchema } } } },
  responses: { 200: { description: "Any 2xx acknowledges the event; a failed one is not retried, the next one supersedes it" } },
});
