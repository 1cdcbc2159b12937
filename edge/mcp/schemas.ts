import { z } from "zod";
import { FileListSchema, StoredFileSchema, UploadRecordSchema } from "../../shared/schemas/files";
import { OutputSchema, TaskSchema } from "../../shared/schemas/tasks";

// Derived from the REST schemas, without their OpenAPI ids: an id becomes a `$ref`, which some
// MCP clients do not resolve in a tool's outputSchema.
const McpOutputSchema = OutputSchema.pick({ filename: true, url: true, size: true });

/** A task as every task tool returns it. */
export const McpTaskSchema = TaskSchema.pick({
  task_id: true, status: true, progress: true, eta_seconds: true, error: true, error_code: true,
  created_at: true, started_at: true, finished_at: true, elapsed: true,
}).extend({
  outputs: z.array(McpOutputSchema).optional().describe("Completed tasks: each output's bare file name, a download URL (valid for 24 h) and its size in bytes"),
});
export type McpTask = z.infer<typeof McpTaskSchema>;

export const McpTaskListSchema = z.object({ total: z.number().int(), tasks: z.array(McpTaskSchema) });

export const McpValidationSchema = z.object({
  valid: z.literal(true),
  inputs: z.array(z.string()).describe("The input URLs the service would download"),
  outputs: z.array(z.string()).describe("The output file names the task would produce"),
});

export const McpUploadSchema = UploadRecordSchema.pick({ url: true, key: true, size: true, content_type: true, expires_at: true });

export const McpFileListSchema = z.object({
  total: FileListSchema.shape.total,
  files: z.array(StoredFileSchema.pick({ url: true, key: true, filename: true, size: true, content_type: true, created_at: true, expires_at: true })),
});

export const McpLogSchema = z.object({
  task_id: z.string(),
  log: z.string().describe("The end of ffmpeg's stderr"),
  truncated: z.boolean().describe("True when only the last max_chars characters are shown"),
});

/** Only the keys the output schema names: clients validate structuredContent against it strictly. */
export function toMcpTask(task: z.input<typeof TaskSchema> | McpTask): McpTask {
  const { task_id, status, progress, eta_seconds, error, error_code, created_at, started_at, finished_at, elapsed, outputs } = task;
  return {
    task_id, status, progress, eta_seconds, error, error_code, created_at, started_at, finished_at, elapsed,
    outputs: outputs?.map(({ filename, url, size }) => ({ filename, url, size })),
  };
}
