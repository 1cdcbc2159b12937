import type { components } from "./openapi.js";

type Schemas = components["schemas"];

export type Task = Schemas["Task"];
export type TaskStatus = Task["status"];
export type TaskEvent = Schemas["TaskEvent"];
export type TaskOutput = Schemas["Output"];
export type CreatedTask = Schemas["CreatedTask"];
export type CreateTask = Schemas["CreateTask"];
export type TaskList = Schemas["TaskList"];
export type Me = Schemas["Me"];
export type UploadLimits = Schemas["UploadLimits"];
export type UploadRecord = Schemas["UploadRecord"];
export type SignUploadResponse = Schemas["SignUploadResponse"];
export type FileList = Schemas["FileList"];
export type StoredFile = Schemas["StoredFile"];
export type WebhookSecret = Schemas["WebhookSecret"];
export type WebhookEvent = Schemas["WebhookEvent"];
export type FileExpiredEvent = Schemas["FileExpiredEvent"];
export type Problem = Schemas["Problem"];
export type TaskStep = Schemas["TaskStep"];
export type CreateStep = Schemas["CreateStep"];
export type OutputDestination = Schemas["OutputDestination"];
export type Redelivery = Schemas["Redelivery"];
export type RetriedTask = Schemas["RetriedTask"];
export type BatchItemCreated = Schemas["BatchItemCreated"];
export type BatchItemRefused = Schemas["BatchItemRefused"];
export type TaskBatchResult = Schemas["TaskBatchResult"];
export type Preset = Schemas["Preset"];
export type PresetList = Schemas["PresetList"];
export type PresetParameters = Schemas["PresetParameters"];
export type PresetParameter = Schemas["PresetParameter"];
export type ExpandedPreset = Schemas["ExpandedPreset"];
export type Destination = Schemas["Destination"];
export type DestinationList = Schemas["DestinationList"];
export type UpdateDestination = Schemas["UpdateDestination"];
export type DestinationTestResult = Schemas["DestinationTestResult"];
export type WebhookEndpoint = Schemas["WebhookEndpoint"];
export type WebhookEndpointCreated = Schemas["WebhookEndpointCreated"];
export type WebhookEndpointUpdate = Schemas["WebhookEndpointUpdate"];
export type WebhookEndpointList = Schemas["WebhookEndpointList"];
export type WebhookEndpointDeliveries = Schemas["WebhookEndpointDeliveries"];
export type WebhookEndpointEvent = Schemas["WebhookEndpointEvent"];
export type RedeliveryQueued = Schemas["RedeliveryQueued"];

/** Fields the service fills with a default: the caller may leave them out. */
type Defaulted<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

export type CreateDestination = Defaulted<Schemas["CreateDestination"], "prefix">;
export type CreateWebhookEndpoint = Defaulted<Schemas["WebhookEndpointCreate"], "enabled">;
/** Where a task's outputs are delivered: a destination's id or name, `copy` (the default) or `only`. */
export type TaskDestination = Defaulted<NonNullable<CreateTask["destination"]>, "mode">;
export type CreatePreset = Omit<Schemas["CreatePreset"], "destination"> & { destination?: TaskDestination };
/** The fields to change; `destination: null` removes the preset's destination. */
export type UpdatePreset = Omit<Schemas["UpdatePreset"], "destination"> & { destination?: TaskDestination | null };

/** What a task runs: exactly one of a command, a preset with its parameters, or 2 to 10 chained steps. */
export type TaskSource = { command: string } | { preset: string; params?: Record<string, unknown> } | { steps: CreateStep[] };

/** A task as POST /v1/tasks (or one item of a batch) takes it. */
export type NewTask = TaskSource & {
  with_metadata?: boolean;
  webhook?: string;
  timeout_seconds?: number;
  destination?: TaskDestination;
};

/** One item's result in a batch: the created task, or the problem that refused it (`error.code`). */
export type BatchItemResult = BatchItemCreated | BatchItemRefused;

export interface ValidatedCommand {
  valid: true;
  inputs: string[];
  outputs: string[];
}

/** What `run()` reports while it works: each upload's bytes, the task's id, then its progress. */
export type RunProgress =
  | { phase: "upload"; file: string; loaded: number; total: number; method: UploadPath }
  | { phase: "submitted"; task_id: string }
  | { phase: "task"; task_id: string; status: TaskStatus; progress: number; eta_seconds?: number }
  /** After `completed`, with a destination: how many outputs' deliveries are still pending (0 once all ended). */
  | { phase: "delivery"; task_id: string; pending: number; total: number };

/** How a file travels: one multipart request, a presigned PUT straight to storage, or resumable tus chunks. */
export type UploadPath = "multipart" | "presigned" | "tus";

export interface UploadProgress {
  loaded: number;
  total: number;
  method: UploadPath;
}
