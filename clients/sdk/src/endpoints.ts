import { type HttpOptions, request, requestJson } from "./http.js";
import type { CreateWebhookEndpoint, RedeliveryQueued, WebhookEndpoint, WebhookEndpointCreated, WebhookEndpointEvent, WebhookEndpointUpdate, WebhookSecret } from "./types.js";

type Signal = { signal?: AbortSignal };

const path = (endpoint: string) => `/v1/webhooks/endpoints/${encodeURIComponent(endpoint)}`;

/** `ff.webhookEndpoints`: URLs subscribed to events (`task.completed`, `task.failed`, `file.expired`), each with its own signing secret. */
export function endpointsResource(http: HttpOptions) {
  return {
    list: async (options: Signal = {}): Promise<WebhookEndpoint[]> => (await requestJson<{ endpoints: WebhookEndpoint[] }>(http, "/v1/webhooks/endpoints", options)).endpoints,
    get: (endpoint: string, options: Signal = {}): Promise<WebhookEndpoint> => requestJson(http, path(endpoint), options),
    /** Registers an endpoint; the answer carries its signing `secret`, shown only this once. */
    create: (endpoint: CreateWebhookEndpoint, options: Signal = {}): Promise<WebhookEndpointCreated> =>
      requestJson(http, "/v1/webhooks/endpoints", { json: endpoint, ...options }),
    /** Changes the URL, events or description, or enables or disables it. */
    update: (endpoint: string, changes: WebhookEndpointUpdate, options: Signal = {}): Promise<WebhookEndpoint> => requestJson(http, path(endpoint), { method: "PATCH", json: changes, ...options }),
    delete: async (endpoint: string, options: Signal = {}): Promise<void> => {
      await request(http, path(endpoint), { method: "DELETE", ...options });
    },
    /** A new signing secret, shown only now; the replaced one keeps signing alongside it for 24 hours. */
    rotateSecret: (endpoint: string, options: Signal = {}): Promise<WebhookSecret> => requestJson(http, `${path(endpoint)}/rotate-secret`, { method: "POST", ...options }),
    /** The last 100 events, newest first, each with every attempt to deliver it. */
    deliveries: async (endpoint: string, options: Signal = {}): Promise<WebhookEndpointEvent[]> => (await requestJson<{ events: WebhookEndpointEvent[] }>(http, `${path(endpoint)}/deliveries`, options)).events,
    /** Sends one logged event again (one attempt, which then appears in `deliveries`). */
    redeliver: (endpoint: string, eventId: string, options: Signal = {}): Promise<RedeliveryQueued> =>
      requestJson(http, `${path(endpoint)}/deliveries/${encodeURIComponent(eventId)}/redeliver`, { method: "POST", ...options }),
  };
}
