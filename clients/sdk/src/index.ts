export { FFedge, type CreateTaskOptions, type FFedgeOptions, type PreparedCommand, type PreparedTask, type PrepareOptions, type RunOptions } from "./client.js";
export type { Upload } from "./sources.js";
export { FFedgeError, type ClientErrorCode } from "./errors.js";
export type { TaskEventMessage, WaitOptions } from "./events.js";
export type { UploadMethod, UploadOptions, UploadTuning } from "./uploads.js";
export { verifyWebhook } from "./webhooks.js";
export type * from "./types.js";
export type { components, paths } from "./openapi.js";
