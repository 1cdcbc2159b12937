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
  url: z.string().min(1),
  event: z.object({ id: z.string().min(1), type: WebhookEventTypeSchema, body: z.string() }),
  /** When the event was handed over, i.e. when its first attempt was due: retries stop 24 h after it. */
  first_attempt_at: z.iso.datetime(),
  /** A redelivery asked for by the user: one attempt, no retries. */
  redelivery: z.boolean(),
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
  .meta({ id: "WebhookDelivery" });
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;

export const WebhookDeliveryListSchema = z
  .object({
    webhook_url: z.string().nullable(),
    webhook_id: z.string().nullable().meta({ description: "The webhook-id header of the task's event, once it has ended" }),
    deliveries: z.array(WebhookDeliverySchema),
  })
  .meta({ id: "WebhookDeliveryList" });

export const RedeliveryQueuedSchema = z
  .object({ webhook_id: z.string(), queued: z.literal(true) })
  .meta({ id: "RedeliveryQueued" });

export const WebhookSecretSchema = z
  .object({
    secret: z.string().meta({ example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", description: "Shown only in this response" }),
    created_at: z.string(),
    previous_valid_until: z.string().nullable().meta({ description: "Until then deliveries are also signed with the previous secret(s)" }),
  })
  .meta({ id: "WebhookSecret" });
