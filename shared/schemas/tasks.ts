import { z } from "zod";
import { TASK_FAILURE_CODES } from "../errors";
import { OutputDestinationSchema, TaskDestinationSchema } from "./destinations";

export const TASK_STATUSES = ["pending", "running", "completed", "failed"] as const;
export const TaskStatusSchema = z.enum(TASK_STATUSES);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

/** Most steps one chained task may have. */
export const MAX_STEPS = 10;

/** One step of a chained task (POST /v1/tasks with `steps`). */
export const CreateStepSchema = z
  .strictObject({
    command: z.string().min(1).meta({ example: "ffmpeg -i {{steps.0.outputs.clip.mp4}} -vf scale=160:-2 small.mp4" }),
    publish: z.boolean().optional().meta({ example: false, description: "false: this step's outputs stay private in the task's work folder, for later steps only. The last step's outputs are always published: `false` there is refused" }),
  })
  .meta({ id: "CreateStep", description: "A step names its outputs in its command; any other member is refused" });

/** The last step's outputs are the task's result: `publish: false` there could only be a mistake. */
function lastStepPublished(steps: readonly { publish?: boolean | undefined }[], context: z.RefinementCtx): void {
  const last = steps.length - 1;
  if (steps[last]?.publish === false) {
    context.addIssue({ code: "custom", path: [last, "publish"], message: `the last step's outputs are the task's result and always published; leave out 'publish' on step ${last} (or set it true)` });
  }
}

export const CreateTaskSchema = z
  .object({
    command: z.string().min(1).optional().meta({ example: "ffmpeg -i https://example.com/in.mp4 -vf scale=640:-2 small.mp4", description: "The ffmpeg command. Give exactly one of `command`, `preset` and `steps`" }),
    preset: z.string().min(1).max(64).optional().meta({ example: "thumbnail", description: "A preset's name or id (GET /v1/presets) to run instead of a `command`, with `params`. The task's `command` is the preset's, with the values in place" }),
    params: z.record(z.string(), z.unknown()).optional().meta({ example: { video: "https://example.com/in.mp4", width: 320 }, description: "The preset's parameters, checked against its schema (PRESET_PARAMS_INVALID names the parameter); each value fills one argument of the command, never more" }),
    steps: z.array(CreateStepSchema).min(2).max(MAX_STEPS).superRefine(lastStepPublished).optional().meta({
      description: "2 to 10 commands run in order in one job folder. A step reads an earlier step's output as `-i {{steps.K.outputs.<file name>}}` (K counted from 0); time, size and output caps apply to the task as a whole",
    }),
    with_metadata: z.boolean().optional().default(false),
    webhook: z.string().max(2048).optional(),
    timeout_seconds: z.number().int().min(1).max(86_400).optional().meta({
      description: "The task's own time limit, at most TASK_TIMEOUT_SECONDS (the default). Until the task ends it holds this much of the daily quota (GET /v1/me's remaining_credits): short tasks submitted in bulk should say so.",
    }),
    destination: TaskDestinationSchema.optional().meta({ example: { id: "archive", mode: "copy" }, description: "Deliver the outputs to one of your destinations (/v1/destinations) once the task completes; each output's `destination` says how that went. With a `preset` that names a destination, this one is used instead" }),
  })
  .meta({ id: "CreateTask" });

export const OutputSchema = z
  .object({
    filename: z.string(),
    url: z.url(),
    size: z.number().int().nonnegative(),
    metadata: z.record(z.string(), z.unknown()).optional().meta({ description: "ffprobe JSON of the output, when with_metadata" }),
    destination: OutputDestinationSchema.optional().meta({ description: "Tasks submitted with a destination: where this output was delivered (`pending` until then)" }),
  })
  .meta({ id: "Output" });

export const TaskStepSchema = z
  .object({
    index: z.number().int().nonnegative(),
    command: z.string(),
    status: TaskStatusSchema,
    progress: z.number().int().min(0).max(100),
    publish: z.boolean().meta({ description: "false: its outputs were kept private (used by later steps only)" }),
    outputs: z.array(OutputSchema).meta({ description: "Its published outputs, once the task has completed" }),
    error: z.string().optional().meta({ description: "The step the task failed at: why (the task's error)" }),
  })
  .meta({
    id: "TaskStep",
    example: { index: 1, command: "ffmpeg -i {{steps.0.outputs.clip.mp4}} -vf scale=160:-2 small.mp4", status: "running", progress: 40, publish: true, outputs: [] },
  });

export const TaskSchema = z
  .object({
    task_id: z.string(),
    status: TaskStatusSchema,
    progress: z.number().int().min(0).max(100),
    eta_seconds: z.number().int().nonnegative().optional().meta({ description: "Running tasks: estimated seconds left, from the progress rate so far" }),
    command: z.string(),
    with_metadata: z.boolean(),
    destination: TaskDestinationSchema.optional().meta({ description: "Tasks submitted with a destination (their own or their preset's): its id and mode. A retry delivers to it again; each output's `destination` says how its delivery went" }),
    outputs: z.array(OutputSchema).optional(),
    steps: z.array(TaskStepSchema).optional().meta({ description: "Chained tasks only: each step in order" }),
    error: z.string().optional().meta({ description: "Why the task failed: the reason plus the tail of ffmpeg's output" }),
    error_code: z.enum(TASK_FAILURE_CODES).optional().meta({ description: "Failed tasks: why, as a stable code. `CANCELED`: the owner canceled the task (POST /v1/tasks/{task_id}/cancel)" }),
    canceled_at: z.string().optional().meta({
      description: "Only on a task its owner canceled: when (the same as finished_at). A canceled task keeps status `failed` (FFHub's clients stop polling on completed or failed) with error_code `CANCELED`; show it as canceled when this field is present",
    }),
    retry_of: z.string().optional().meta({ example: "tsk_3f9a1c0d2b7e4a5f6c8d9e0a", description: "A task made by POST /v1/tasks/{task_id}/retry: the finished task it runs again" }),
    retries: z.number().int().nonnegative().meta({ description: "Times the task was started again because its transcoder was lost (at most 2; then it fails TRANSCODER_LOST)" }),
    created_at: z.string(),
    started_at: z.string().nullable(),
    finished_at: z.string().nullable(),
    elapsed: z.string().nullable().meta({ example: "215.30", description: "Seconds spent running (started_at to finished_at or now), a decimal string with two decimals as FFHub sends it" }),
    total_elapsed: z.string().meta({ example: "216.02", description: "Seconds since the task was created, until it finished, a decimal string with two decimals" }),
  })
  .meta({ id: "Task", description: "A task, exactly as GET /v1/tasks/{task_id} returns it" });
export type Task = z.infer<typeof TaskSchema>;

/**
 * `GET /v1/tasks/{task_id}` without a key: only what FFHub's clients read. Anyone holding one
 * output link knows the task id, so nothing here may reach the owner's inputs: no command (its
 * URLs carry signed query strings), and an `error` that says only how the task failed, never
 * ffmpeg's messages (they quote inputs and their metadata).
 */
export const PublicTaskSchema = TaskSchema.pick({
  task_id: true, status: true, progress: true, eta_seconds: true, outputs: true, error: true, error_code: true, canceled_at: true,
  created_at: true, started_at: true, finished_at: true, elapsed: true, total_elapsed: true,
}).meta({ id: "PublicTask", description: "A task as GET /v1/tasks/{task_id} returns it to a request without a key" });
export type PublicTask = z.infer<typeof PublicTaskSchema>;

export const CreatedTaskSchema = TaskSchema.pick({ task_id: true, status: true, created_at: true }).meta({
  id: "CreatedTask",
  example: { task_id: "tsk_3f9a1c0d2b7e4a5f6c8d9e0a", status: "pending", created_at: "2026-11-26T07:30:00.120Z" },
});

/** Plain decimal digits only: Number() would also read "0x10", "1e2" or " 5 ". */
export const decimalInteger = (min: number, max: number) =>
  z.string().regex(/^[0-9]{1,9}$/, "must be a decimal integer").transform(Number).pipe(z.number().int().min(min).max(max));

/** Unknown parameters (one FFHub connector sends `user_id`) are ignored. */
/** A task status, or `canceled`: the failed tasks their owner canceled. */
export type TaskStatusFilter = TaskStatus | "canceled";

export const ListTasksQuerySchema = z.object({
  status: z
    .enum([...TASK_STATUSES, "canceled", "succeeded"])
    .optional()
    .transform((status): TaskStatusFilter | undefined => (status === "succeeded" ? "completed" : status))
    .meta({
      description:
        "`succeeded` (FFHub's CLI) means `completed`. `canceled` lists the tasks their owner canceled (status `failed`, error_code `CANCELED`); `failed` lists every task whose status is failed, canceled ones included",
    }),
  limit: decimalInteger(1, 100).optional().default(10),
  offset: decimalInteger(0, 1_000_000_000).optional().default(0),
});

export const TaskListSchema = z.object({ total: z.number().int(), tasks: z.array(TaskSchema) }).meta({
  id: "TaskList",
  example: {
    total: 1,
    tasks: [{
      task_id: "tsk_3f9a1c0d2b7e4a5f6c8d9e0a", status: "running", progress: 42, eta_seconds: 18, command: "ffmpeg -i https://example.com/in.mp4 -vf scale=640:-2 small.mp4", with_metadata: false, retries: 0,
      created_at: "2026-11-26T07:30:00.120Z", started_at: "2026-11-26T07:30:01.004Z", finished_at: null, elapsed: "13.10", total_elapsed: "14.00",
    }],
  },
});

/** What live watchers (`GET /v1/tasks/{id}/events`) receive on every change. */
export const TaskEventSchema = TaskSchema.pick({ task_id: true, status: true, progress: true, eta_seconds: true, started_at: true, finished_at: true, outputs: true, error: true, error_code: true, canceled_at: true }).meta({
  id: "TaskEvent",
  example: { task_id: "tsk_3f9a1c0d2b7e4a5f6c8d9e0a", status: "running", progress: 42, eta_seconds: 18, started_at: "2026-11-26T07:30:01.004Z", finished_at: null },
});
export type TaskEvent = z.infer<typeof TaskEventSchema>;

/** `{task_id}` in paths. */
export const TaskIdParamSchema = z.object({ task_id: z.string().min(1).max(64).meta({ param: { name: "task_id", in: "path" } }) });
