import { z } from "zod";
import { ProblemSchema } from "../errors";
import { CreateTaskSchema, CreatedTaskSchema } from "./tasks";

/** The most tasks one `POST /v1/tasks/batch` submits. */
export const MAX_BATCH_TASKS = 100;

const tooMany = `a batch holds at most ${MAX_BATCH_TASKS} tasks; split it into several requests`;

/** `POST /v1/tasks/batch` as the OpenAPI document shows it: every item is a CreateTask. */
export const TaskBatchSchema = z
  .object({
    tasks: z.array(CreateTaskSchema).min(1).max(MAX_BATCH_TASKS, tooMany).meta({ description: `1 to ${MAX_BATCH_TASKS} tasks, each exactly what POST /v1/tasks takes; submitted in this order` }),
  })
  .meta({
    id: "TaskBatch",
    example: {
      tasks: [
        { command: "ffmpeg -i https://example.com/a.mp4 -vf scale=640:-2 a.mp4", timeout_seconds: 120 },
        { preset: "thumbnail", params: { video: "https://example.com/b.mp4" } },
        { steps: [{ command: "ffmpeg -i https://example.com/c.mp4 -t 2 clip.mp4", publish: false }, { command: "ffmpeg -i {{steps.0.outputs.clip.mp4}} -frames:v 1 thumb.jpg" }] },
      ],
    },
  });

/**
 * The same body as the route reads it: only the envelope is checked whole, each item is parsed
 * on its own (edge/tasks/batch.ts), so one malformed item is refused alone and the others run.
 */
export const TaskBatchEnvelopeSchema = z.object({ tasks: z.array(z.unknown()).min(1).max(MAX_BATCH_TASKS, tooMany) });

const index = z.number().int().min(0).max(MAX_BATCH_TASKS - 1).meta({ description: "The item's position in `tasks`, from 0" });

const createdItem = { index: 0, task_id: "tsk_3f9a1c0d2b7e4a5f6c8d9e0a", status: "pending", created_at: "2026-11-26T07:30:00.120Z" } as const;
const refusedItem = {
  index: 1,
  error: { type: "https://ffedge.dev/problems/no-output", title: "No output", status: 400, detail: "tasks[1]: The command has no output file name.", code: "NO_OUTPUT", pointer: "/tasks/1" },
};

const BatchItemCreatedSchema = z.object({ index, ...CreatedTaskSchema.shape }).meta({ id: "BatchItemCreated", example: createdItem });

const BatchItemRefusedSchema = z
  .object({ index, error: ProblemSchema })
  .meta({ id: "BatchItemRefused", example: refusedItem, description: "An item refused as POST /v1/tasks would refuse it (its status and code in `error`); `error.pointer` (`/tasks/<index>`) names the item" });

export const TaskBatchResultSchema = z
  .object({
    results: z.array(z.union([BatchItemCreatedSchema, BatchItemRefusedSchema])).meta({ description: "One per item, in the order of `tasks`: the created task, or the problem that refused the item" }),
    created: z.number().int().nonnegative(),
    refused: z.number().int().nonnegative(),
  })
  .meta({ id: "TaskBatchResult", example: { results: [createdItem, refusedItem], created: 1, refused: 1 } });
export type TaskBatchResult = z.infer<typeof TaskBatchResultSchema>;

export const RetriedTaskSchema = z
  .object({ ...CreatedTaskSchema.shape, retry_of: z.string().meta({ description: "The finished task this one runs again" }) })
  .meta({ id: "RetriedTask", example: { task_id: "tsk_9c0e1d2f3a4b5c6d7e8f9a0b", status: "pending", created_at: "2026-11-26T08:00:00.000Z", retry_of: "tsk_3f9a1c0d2b7e4a5f6c8d9e0a" } });
export type RetriedTask = z.infer<typeof RetriedTaskSchema>;
