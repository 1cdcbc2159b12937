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
  .meta({ id: "TaskBatch" });

/**
 * The same body as the route reads it: only the envelope is checked whole, each item is parsed
 * on its own (edge/tasks/batch.ts), so one malformed item is refused alone and the others run.
 */
export const TaskBatchEnvelopeSchema = z.object({ tasks: z.array(z.unknown()).min(1).max(MAX_BATCH_TASKS, tooMany) });

const index = z.number().int().min(0).max(MAX_BATCH_TASKS - 1).meta({ description: "The item's position in `tasks`, from 0" });

const BatchItemCreatedSchema = z.object({ index, ...CreatedTaskSchema.shape }).meta({ id: "BatchItemCreated" });

const BatchItemRefusedSchema = z
  .object({ index, error: ProblemSchema })
  .meta({ id: "BatchItemRefused", description: "An item refused as POST /v1/tasks would refuse it (its status and code in `error`); `error.pointer` (`/tasks/<index>`) names the item" });

export const TaskBatchResultSchema = z
  .object({
    results: z.array(z.union([BatchItemCreatedSchema, BatchItemRefusedSchema])).meta({ description: "One per item, in the order of `tasks`: the created task, or the problem that refused the item" }),
    created: z.number().int().nonnegative(),
    refused: z.number().int().nonnegative(),
  })
  .meta({ id: "TaskBatchResult" });
export type TaskBatchResult = z.infer<typeof TaskBatchResultSchema>;

export const RetriedTaskSchema = z
  .object({ ...CreatedTaskSchema.shape, retry_of: z.string().meta({ description: "The finished task this one runs again" }) })
  .meta({ id: "RetriedTask" });
export type RetriedTask = z.infer<typeof RetriedTaskSchema>;
