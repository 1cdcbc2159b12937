/**
 * What the console's pages read from the API. The shapes come from the same zod schemas the
 * Worker answers with (shared/); the two answers whose schema is written inline in their route
 * are described here.
 */
import type { z } from "zod";
import type { ProblemSchema } from "../../../shared/errors";
import type { ApiKeyListSchema, CreatedApiKeySchema, DailyUsageSchema, MessageSchema, SessionSchema } from "../../../shared/schemas/accounts";
import type { StoredFileSchema, UploadRecord } from "../../../shared/schemas/files";
import type { CreatedTaskSchema, OutputSchema, Task, TaskEvent, TaskListSchema } from "../../../shared/schemas/tasks";
import type { DestinationListSchema, DestinationSchema } from "../../../shared/schemas/destinations";
import type { PresetListSchema, PresetSchema } from "../../../shared/schemas/presets";
import type { TaskStepSchema } from "../../../shared/schemas/tasks";
import type { EndpointDeliveryLogSchema, WebhookDeliveryListSchema, WebhookEndpointCreatedSchema, WebhookEndpointListSchema, WebhookEndpointSchema, WebhookSecretSchema } from "../../../shared/schemas/webhooks";

export type { Task, TaskEvent, UploadRecord };
export type TaskOutput = z.infer<typeof OutputSchema>;
export type TaskList = z.infer<typeof TaskListSchema>;
export type CreatedTask = z.infer<typeof CreatedTaskSchema>;
export type StoredFile = z.infer<typeof StoredFileSchema>;
export type Session = z.infer<typeof SessionSchema>;
export type Message = z.infer<typeof MessageSchema>;
export type ApiKeyList = z.infer<typeof ApiKeyListSchema>;
export type CreatedApiKey = z.infer<typeof CreatedApiKeySchema>;
export type Usage = z.infer<typeof DailyUsageSchema>;
export type DeliveryList = z.infer<typeof WebhookDeliveryListSchema>;
export type WebhookSecret = z.infer<typeof WebhookSecretSchema>;
export type Preset = z.infer<typeof PresetSchema>;
export type PresetList = z.infer<typeof PresetListSchema>;
export type TaskStep = z.infer<typeof TaskStepSchema>;
export type Destination = z.infer<typeof DestinationSchema>;
export type DestinationList = z.infer<typeof DestinationListSchema>;
export type Endpoint = z.infer<typeof WebhookEndpointSchema>;
export type EndpointList = z.infer<typeof WebhookEndpointListSchema>;
export type CreatedEndpoint = z.infer<typeof WebhookEndpointCreatedSchema>;
export type EndpointLog = z.infer<typeof EndpointDeliveryLogSchema>;

/** A task as the pages show it: a whole task from the API, or what its event stream has told so far. */
export type TaskView = TaskEvent & Partial<Task>;

/** POST /v1/tasks/validate (edge/routes/tasks.ts). */
export interface Validation {
  inputs: string[];
  outputs: string[];
}

/** GET /console/api/task-summaries (edge/console/api/task-summaries.ts). */
export interface TaskSummaries {
  summaries: Record<string, { text: string }>;
}

/**
 * RFC 9457 problem details (shared/errors.ts), with the extension members the pages read; every
 * member may be missing, as in an answer that is not ours (a proxy's error page).
 */
export type Problem = Partial<z.infer<typeof ProblemSchema>> & { retry_after?: number; limit?: number; token?: string; field?: string; param?: string; placeholder?: string; policy_code?: string; presets?: string[]; issues?: { path: (string | number)[]; message: string }[] };
