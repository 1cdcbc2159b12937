import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { ENDPOINT_EVENT_TYPES, EndpointEventLogSchema, MAX_ENDPOINTS_PER_USER, WebhookDeliverySchema, WebhookEndpointSchema } from "../../shared/schemas/webhooks";
import { pathId } from "./arguments";
import { type Caller, asTool, callApi, callJson, toolResult } from "./rest";

const endpointId = pathId("an endpoint id").describe("The endpoint's id, 'whe_' and 24 hex digits, from list_webhook_endpoints");

// Built afresh from the REST schemas' fields: their OpenAPI ids would become `$ref`s.
const McpEndpointSchema = WebhookEndpointSchema.pick({ id: true, url: true, description: true, enabled: true, created_at: true })
  .extend({ events: z.array(z.enum(ENDPOINT_EVENT_TYPES)) });
type McpEndpoint = z.infer<typeof McpEndpointSchema>;
const McpEndpointListSchema = z.object({ endpoints: z.array(McpEndpointSchema) });
const McpEventLogSchema = EndpointEventLogSchema.pick({ event_id: true, task_id: true, created_at: true, delivered: true })
  .extend({ type: z.enum(ENDPOINT_EVENT_TYPES), attempts: z.array(WebhookDeliverySchema.pick({ attempt: true, attempted_at: true, status_code: true, success: true, error: true })) });
type McpEventLog = z.infer<typeof McpEventLogSchema>;

const toEndpoint = ({ id, url, events, description, enabled, created_at }: McpEndpoint): McpEndpoint => ({ id, url, events, description, enabled, created_at });
const describeEndpoint = (endpoint: McpEndpoint) => `- ${endpoint.id} ${endpoint.url} [${endpoint.events.join(", ")}]${endpoint.enabled ? "" : " (disabled)"}`;

/** list_webhook_endpoints, create_webhook_endpoint, delete_webhook_endpoint and get_webhook_deliveries. */
export function registerEndpointTools(server: McpServer, caller: Caller): void {
  server.registerTool("list_webhook_endpoints", {
    title: "List webhook endpoints",
    description: "Your registered webhook endpoints: URLs that receive a signed POST for events of all your tasks and files (task.completed, task.failed, file.expired ...), without passing a webhook with each task. Their secrets are never shown again.",
    inputSchema: {},
    outputSchema: McpEndpointListSchema.shape,
    annotations: { readOnlyHint: true },
  }, () => asTool(async () => {
    const endpoints = (await callJson<{ endpoints: McpEndpoint[] }>(caller, "GET", "/v1/webhooks/endpoints")).endpoints.map(toEndpoint);
    return toolResult({ endpoints }, `${endpoints.length} endpoint(s)${endpoints.length ? `:\n${endpoints.map(describeEndpoint).join("\n")}` : "."}`);
  }));

  server.registerTool("create_webhook_endpoint", {
    title: "Register a webhook endpoint",
    description: `Registers a URL that then receives a POST for each event it subscribes to, for all of the user's tasks and files, signed with Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature). The answer holds the endpoint's signing SECRET exactly once: hand it to the user (or the receiving system) to verify signatures, because it cannot be read again (a new one comes from rotating it in the console or the API). The URL must be https on a public host: localhost, private and internal addresses (10.x, 192.168.x, 169.254.x ...) are refused (URL_HOST_BLOCKED, URL_NOT_ALLOWED). At most ${MAX_ENDPOINTS_PER_USER} endpoints (ENDPOINT_LIMIT_REACHED).`,
    inputSchema: {
      url: z.string().min(1).max(2048).describe("e.g. https://hooks.example.com/ffedge"),
      events: z.array(z.enum(ENDPOINT_EVENT_TYPES)).min(1).describe(`The events to send: ${ENDPOINT_EVENT_TYPES.join(", ")}`),
      description: z.string().max(200).optional().describe("What the endpoint is for, for the user's own reference"),
    },
    outputSchema: McpEndpointSchema.extend({ secret: z.string().describe("The signing secret (whsec_...), shown only in this answer") }).shape,
    annotations: { openWorldHint: true },
  }, ({ url, events, description }) => asTool(async () => {
    const created = await callJson<McpEndpoint & { secret: string }>(caller, "POST", "/v1/webhooks/endpoints", { url, events, description });
    const endpoint = { ...toEndpoint(created), secret: created.secret };
    return toolResult(endpoint, `Registered ${endpoint.id} for ${endpoint.events.join(", ")}. Its signing secret is ${endpoint.secret}: it is shown only now, so give it to the user or the receiver now.`);
  }));

  server.registerTool("delete_webhook_endpoint", {
    title: "Delete a webhook endpoint",
    description: "Deletes a registered endpoint, its secrets and its delivery log: it is sent nothing more. Another user's or an unknown id is NOT_FOUND.",
    inputSchema: { endpoint_id: endpointId },
    outputSchema: { deleted: z.literal(true), id: z.string() },
    annotations: { destructiveHint: true, idempotentHint: true },
  }, ({ endpoint_id }) => asTool(async () => {
    await callApi(caller, "DELETE", `/v1/webhooks/endpoints/${encodeURIComponent(endpoint_id)}`);
    return toolResult({ deleted: true, id: endpoint_id }, `Deleted endpoint ${endpoint_id}.`);
  }));

  server.registerTool("get_webhook_deliveries", {
    title: "Read an endpoint's deliveries",
    description: "An endpoint's latest events, newest first, each with every attempt to deliver it (HTTP status, error): why a receiver got nothing. Undelivered events are retried for 24 hours.",
    inputSchema: {
      endpoint_id: endpointId,
      limit: z.number().int().min(1).max(100).default(20).describe("Events to show (1-100)"),
    },
    outputSchema: { events: z.array(McpEventLogSchema) },
    annotations: { readOnlyHint: true },
  }, ({ endpoint_id, limit }) => asTool(async () => {
    const { events } = await callJson<{ events: McpEventLog[] }>(caller, "GET", `/v1/webhooks/endpoints/${encodeURIComponent(endpoint_id)}/deliveries`);
    const shown = events.slice(0, limit).map(({ event_id, type, task_id, created_at, delivered, attempts }) => ({
      event_id, type, task_id, created_at, delivered,
      attempts: attempts.map(({ attempt, attempted_at, status_code, success, error }) => ({ attempt, attempted_at, status_code, success, error })),
    }));
    const lines = shown.map((event) => `- ${event.event_id} ${event.type} ${event.delivered ? "delivered" : "not delivered"} after ${event.attempts.length} attempt(s)${event.attempts.at(-1)?.error ? `: ${event.attempts.at(-1)!.error}` : ""}`);
    return toolResult({ events: shown }, `${events.length} event(s); showing ${shown.length}${shown.length ? `:\n${lines.join("\n")}` : "."}`);
  }));
}
