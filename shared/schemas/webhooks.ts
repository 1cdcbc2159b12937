import { z } from "zod";
import { TaskSchema } from "./tasks";

export const WEBHOOK_EVENT_TYPES = ["task.completed", "task.failed"] as const;
export const WebhookEventTypeSchema = z.enum(WEBHOOK_EVENT_TYPES);
export type WebhookEventType = z.infer<typeof WebhookEventTypeSchema>;

/**
 * The JSON body POSTed to a task's webhook: the task object itself, exactly as
 * GET /v1/tasks/{task_id} returns it (FFHub's format). The event type is in the `webhook-event`
 * header. Identical across retries and redeliveries.
 */
export const WebhookEventSchema = TaskSchema.meta({ id: "WebhookEvent", description: "The task, exactly as GET /v1/tasks/{task_id} returns it; the event type is in the webhook-event header" });

/**
 * A task's end event handed to its receiver's Durable Object (edge/webhooks/receiver-object.ts),
 * which makes the attempts and retries them. It carries the signed bytes and where they go, so
 * no attempt reads the task again; `event.id` is the `webhook-id`, the same on every attempt.
 */
export const WebhookHandoverSchema = z.object({
  task_id: z.string().min(1),
  user_id: z.string().min(1),
  /** The task's own webhook; null when the event goes only to the owner's registered endpoints. */
  url: z.string().min(1).nullable(),
  event: z.object({ id: z.string().min(1), type: WebhookEventTypeSchema, body: z.string() }),
  /** When the event was handed over, i.e. when its first attempt was due: retries stop 24 h after it. */
  first_attempt_at: z.iso.datetime(),
  /** A redelivery asked for by the user: one attempt, no retries. */
  redelivery: z.boolean(),
  /**
   * The owner's endpoints subscribed to the event, read in the same statement that wrote the
   * task's end (so the fan-out need not read them again); absent: the fan-out reads them.
   */
  endpoints: z.array(z.string().min(1)).optional(),
});
export type WebhookHandover = z.infer<typeof WebhookHandoverSchema>;

export const WebhookDeliverySchema = z
  .object({
    attempt: z.number().int().positive().meta({ description: "1 for the first attempt; numbering continues across retries and redeliveries" }),
    attempted_at: z.string(),
    redelivery: z.boolean(),
    status_code: z.number().int().nullable().meta({ description: "The receiver's HTTP status; null when no answer was received" }),
    latency_ms: z.number().int().nonnegative().nullable(),
    success: z.boolean().meta({ description: "True only for a 2xx answer" }),
    error: z.string().nullable().meta({ description: "Why the attempt failed: a non-2xx status, a timeout, a refused URL, ..." }),
  })
  .meta({ id: "WebhookDelivery", example: { attempt: 1, attempted_at: "2026-11-26T07:30:05.412Z", redelivery: false, status_code: 503, latency_ms: 212, success: false, error: "The receiver answered 503." } });
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

export const WebhookDeliveryListSchema = z
  .object({
    webhook_url: z.string().nullable(),
    webhook_id: z.string().nullable().meta({ description: "The webhook-id header of the task's event, once it has ended" }),
    deliveries: z.array(WebhookDeliverySchema),
  })
  .meta({ id: "WebhookDeliveryList", example: { webhook_url: "https://hooks.example.com/ffedge", webhook_id: "msg_tsk_0123456789abcdef01234567_completed", deliveries: [{ attempt: 1, attempted_at: "2026-11-26T07:30:05.412Z", redelivery: false, status_code: 503, latency_ms: 212, success: false, error: "The receiver answered 503." }, { attempt: 2, attempted_at: "2026-11-26T07:30:35.020Z", redelivery: false, status_code: 200, latency_ms: 98, success: true, error: null }] } });

export const RedeliveryQueuedSchema = z
  .object({ webhook_id: z.string(), queued: z.literal(true) })
  .meta({ id: "RedeliveryQueued", example: { webhook_id: "msg_tsk_0123456789abcdef01234567_completed", queued: true } });

export const WebhookSecretSchema = z
  .object({
    secret: z.string().meta({ example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", description: "Shown only in this response" }),
    created_at: z.string(),
    previous_valid_until: z.string().nullable().meta({ description: "Until then deliveries are also signed with the previous secret(s)" }),
  })
  .meta({ id: "WebhookSecret" });

/** What a registered endpoint can subscribe to. */
export const ENDPOINT_EVENT_TYPES = ["task.completed", "task.failed", "task.progress", "file.expired"] as const;
export const EndpointEventTypeSchema = z.enum(ENDPOINT_EVENT_TYPES);
export type EndpointEventType = z.infer<typeof EndpointEventTypeSchema>;

/** At most this many endpoints per user (ENDPOINT_LIMIT_REACHED beyond). */
export const MAX_ENDPOINTS_PER_USER = 20;

const endpointUrl = z.string().min(1).max(2048).meta({ example: "https://hooks.example.com/ffedge", description: "https, on a public host (plain http only to the development allow-list)" });
const endpointEvents = z.array(EndpointEventTypeSchema).min(1).max(ENDPOINT_EVENT_TYPES.length).meta({ example: ["task.completed", "task.failed"] });
const endpointDescription = z.string().max(200);

export const WebhookEndpointSchema = z
  .object({
    id: z.string().meta({ example: "whe_0123456789abcdef01234567" }),
    url: z.string(),
    events: z.array(EndpointEventTypeSchema),
    description: z.string().nullable(),
    enabled: z.boolean().meta({ description: "A disabled endpoint keeps its settings and log but is sent nothing" }),
    created_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: "WebhookEndpoint" });
export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;

export const WebhookEndpointCreateSchema = z
  .object({ url: endpointUrl, events: endpointEvents, description: endpointDescription.optional(), enabled: z.boolean().default(true) })
  .meta({ id: "WebhookEndpointCreate" });
export type WebhookEndpointCreate = z.infer<typeof WebhookEndpointCreateSchema>;

export const WebhookEndpointUpdateSchema = z
  .object({ url: endpointUrl.optional(), events: endpointEvents.optional(), description: endpointDescription.nullable().optional(), enabled: z.boolean().optional() })
  .refine((update) => Object.values(update).some((value) => value !== undefined), { message: "Name at least one of url, events, description, enabled" })
  .meta({ id: "WebhookEndpointUpdate" });
export type WebhookEndpointUpdate = z.infer<typeof WebhookEndpointUpdateSchema>;

export const WebhookEndpointCreatedSchema = WebhookEndpointSchema.extend({
  secret: z.string().meta({ example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", description: "The endpoint's signing secret, shown only in this response" }),
}).meta({ id: "WebhookEndpointCreated" });

export const WebhookEndpointListSchema = z.object({ endpoints: z.array(WebhookEndpointSchema) }).meta({
  id: "WebhookEndpointList",
  example: { endpoints: [{ id: "whe_0123456789abcdef01234567", url: "https://hooks.example.com/ffedge", events: ["task.completed", "task.failed"], description: "CI", enabled: true, created_at: "2026-11-26T07:00:00.000Z", updated_at: "2026-11-26T07:00:00.000Z" }] },
});

export const EndpointIdParamSchema = z.object({ endpoint_id: z.string().min(1).max(64).meta({ param: { name: "endpoint_id", in: "path" }, example: "whe_0123456789abcdef01234567" }) });
export const EndpointEventParamSchema = EndpointIdParamSchema.extend({ event_id: z.string().min(1).max(128).meta({ param: { name: "event_id", in: "path" }, example: "msg_tsk_0123456789abcdef01234567_completed" }) });

export const EndpointEventLogSchema = z
  .object({
    event_id: z.string().meta({ description: "The webhook-id header of the event, the same on every attempt" }),
    type: EndpointEventTypeSchema,
    task_id: z.string().nullable(),
    created_at: z.string(),
    delivered: z.boolean().meta({ description: "True once an attempt got a 2xx; until then retries follow for 24 h" }),
    attempts: z.array(WebhookDeliverySchema),
  })
  .meta({ id: "WebhookEndpointEvent", example: { event_id: "msg_tsk_0123456789abcdef01234567_completed", type: "task.completed", task_id: "tsk_0123456789abcdef01234567", created_at: "2026-11-26T07:30:05.300Z", delivered: true, attempts: [{ attempt: 1, attempted_at: "2026-11-26T07:30:05.412Z", redelivery: false, status_code: 503, latency_ms: 212, success: false, error: "The receiver answered 503." }, { attempt: 2, attempted_at: "2026-11-26T07:30:35.020Z", redelivery: false, status_code: 200, latency_ms: 98, success: true, error: null }] } });
export type EndpointEventLog = z.infer<typeof EndpointEventLogSchema>;

export const EndpointDeliveryLogSchema = z.object({ events: z.array(EndpointEventLogSchema).meta({ description: "Newest first, the last 100 events" }) }).meta({
  id: "WebhookEndpointDeliveries",
  example: { events: [{ event_id: "msg_tsk_0123456789abcdef01234567_completed", type: "task.completed", task_id: "tsk_0123456789abcdef01234567", created_at: "2026-11-26T07:30:05.300Z", delivered: true, attempts: [{ attempt: 1, attempted_at: "2026-11-26T07:30:35.020Z", redelivery: false, status_code: 200, latency_ms: 98, success: true, error: null }] }] },
});

/**
 * An event handed to the receiver object of a registered endpoint. The URL and the secrets are
 * read from the endpoint at each attempt, so a disabled, deleted or re-pointed endpoint is honoured.
 */
export const EndpointHandoverSchema = z.object({
  endpoint_id: z.string().min(1),
  event: z.object({ id: z.string().min(1), type: EndpointEventTypeSchema, body: z.string() }),
  /** The task the event is about: its end clears the endpoint's waiting progress event for it. */
  task_id: z.string().min(1).nullable().optional(),
  first_attempt_at: z.iso.datetime(),
  redelivery: z.boolean(),
});
export type EndpointHandover = z.infer<typeof EndpointHandoverSchema>;

/**
 * A running task's progress for one endpoint: latest wins (a newer `seq` replaces one not yet
 * sent), one attempt and no retries, and nothing once the task's end has reached the endpoint.
 */
export const ProgressHandoverSchema = z.object({
  endpoint_id: z.string().min(1),
  task_id: z.string().min(1),
  /** Counts the task's progress events: orders them, and names each one's `webhook-id`. */
  seq: z.number().int().positive(),
  event: z.object({ id: z.string().min(1), type: z.literal("task.progress"), body: z.string() }),
});
export type ProgressHandover = z.infer<typeof ProgressHandoverSchema>;

/** The body of `file.expired`: a stored file reached its expiry and was deleted by the sweep. */
export const FileExpiredEventSchema = z
  .object({
    key: z.string().meta({ example: "outputs/usr_0123/tsk_0123456789abcdef01234567/out.mp4" }),
    kind: z.enum(["upload", "output"]),
    task_id: z.string().nullable().meta({ description: "The task that produced the file, for an output" }),
    expired_at: z.string().meta({ description: "When the sweep deleted it" }),
  })
  .meta({ id: "FileExpiredEvent" });
export type FileExpiredEvent = z.infer<typeof FileExpiredEventSchema>;
