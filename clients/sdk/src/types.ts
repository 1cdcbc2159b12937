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
export type Problem = Schemas["Problem"];

export interface ValidatedCommand {
  valid: true;
  inputs: string[];
  outputs: string[];
}

/** What `run()` reports while it works: each upload's bytes, the task's id, then its progress. */
export type RunProgress =
  | { phase: "upload"; file: string; loaded: number; total: number; method: UploadPath }
  | { phase: "submitted"; task_id: string }
  | { phase: "task"; task_id: string; status: TaskStatus; progress: number; eta_seconds?: number };

/** How a file travels: one multipart request, a presigned PUT straight to storage, or resumable tus chunks. */
export type UploadPath = "multipart" | "presigned" | "tus";

export interface UploadProgress {
  loaded: number;
  total: number;
  method: UploadPath;
}
