import { z } from "zod";
import { FileListSchema, StoredFileSchema, UploadRecordSchema } from "../../shared/schemas/files";
import { OutputDestinationSchema } from "../../shared/schemas/destinations";
import { OutputSchema, TaskSchema, TaskStepSchema } from "../../shared/schemas/tasks";

// Derived from the REST schemas, without their OpenAPI ids: an id becomes a `$ref`, which some
// MCP clients do not resolve in a tool's outputSchema.
const McpDeliverySchema = OutputDestinationSchema.pick({ status: true, key: true, url: true, error: true, error_code: true });

const McpOutputSchema = OutputSchema.pick({ filename: true, url: true, size: true }).extend({
  destination: McpDeliverySchema.optional().describe("Tasks run with a destination: this output's delivery to your bucket (pending, delivered with the object's key and url, or failed with why)"),
});

const McpStepSchema = TaskStepSchema.pick({ index: true, command: true, status: true, progress: true, publish: true, error: true }).extend({
  outputs: z.array(McpOutputSchema).describe("The step's published outputs, once the task has completed"),
});

/** A task as every task tool returns it. */
export const McpTaskSchema = TaskSchema.pick({
  task_id: true, status: true, progress: true, eta_seconds: true, error: true, error_code: true,
  created_at: true, started_at: true, finished_at: true, elapsed: true,
}).extend({
  outputs: z.array(McpOutputSchema).optional().describe("Completed tasks: each output's bare file name, a download URL (valid for 24 h) and its size in bytes"),
  steps: z.array(McpStepSchema).optional().describe("Chained tasks (run_steps) only: each step in order with its status, progress and published outputs"),
  failed_step: z.number().int().nonnegative().optional().describe("A chained task that failed: the index of the step it failed at (later steps never ran)"),
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
  const { task_id, status, progress, eta_seconds, error, error_code, created_at, started_at, finished_at, elapsed, outputs, steps } = task;
  const failedStep = steps?.find((step) => step.status === "failed")?.index;
  return {
    task_id, status, progress, eta_seconds, error, error_code, created_at, started_at, finished_at, elapsed,
    outputs: outputs?.map(toMcpOutput),
    ...(steps && {
      steps: steps.map(({ index, command, status: stepStatus, progress: stepProgress, publish, error: stepError, outputs: stepOutputs }) => ({
        index, command, status: stepStatus, progress: stepProgress, publish, error: stepError, outputs: stepOutputs.map(toMcpOutput),
      })),
    }),
    ...(failedStep !== undefined && { failed_step: failedStep }),
  };
}

type AnyOutput = NonNullable<z.input<typeof TaskSchema>["outputs"]>[number] | McpOutput;
type McpOutput = z.infer<typeof McpOutputSchema>;

function toMcpOutput({ filename, url, size, destination }: AnyOutput): McpOutput {
  if (!destination) return { filename, url, size };
  const { status, key, url: deliveredUrl, error, error_code } = destination;
  return { filename, url, size, destination: { status, key, url: deliveredUrl, error, error_code } };
}
