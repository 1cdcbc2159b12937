import { z } from "zod";
import { TASK_FAILURE_CODES } from "../errors";
import { MAX_STEPS } from "./tasks";

/**
 * The contract between the edge and the transcoders. The edge validates every report it
 * receives with these schemas, and the transcoder validates every job it accepts.
 */

/** Body of the transcoder's `POST /jobs` (Authorization: Bearer TRANSCODER_SECRET). */
export const TranscodeJobSchema = z.object({
  task_id: z.string().min(1).max(64).regex(/^[A-Za-z0-9_-]+$/),
  /**
   * Which run of the task this is (0 first, one more each time the edge starts it again). A
   * transcoder knows a job by task and run: a newer run replaces an older one, an older or
   * finished one is refused, and GET/DELETE /jobs/{task_id}?run= name the run they mean.
   */
  run: z.number().int().nonnegative().optional(),
  /** The user's command line, exactly as submitted: the transcoder re-applies the policy. */
  command: z.string().min(1),
  /**
   * A chained task: its steps as submitted, run in order in one job folder (the transcoder
   * re-applies the policy to each, shared/ffmpeg/steps.ts). `command` is then the first step's.
   */
  steps: z.array(z.object({ command: z.string().min(1), publish: z.boolean() })).min(2).max(MAX_STEPS).optional(),
  with_metadata: z.boolean(),
  /**
   * Base URL of this task's callbacks on the edge, e.g. https://api.example.com/internal/tasks/<id>:
   * reports go to `{callback_url}/events`, and each output is PUT to `{callback_url}/outputs/<filename>`.
   */
  callback_url: z.url(),
  /** Bearer token for the callbacks; scoped to this task only. */
  callback_token: z.string().min(1),
  timeout_seconds: z.number().int().positive(),
  /**
   * The largest output file the edge will store (its MAX_UPLOAD_BYTES): the transcoder stops
   * ffmpeg as soon as one output passes it, rather than encoding all of it to be refused.
   */
  max_output_file_bytes: z.number().int().positive().optional(),
});
export type TranscodeJob = z.infer<typeof TranscodeJobSchema>;

/**
 * Reports the transcoder POSTs to `{callback_url}/events`. `seq` increases with every report
 * of one job run, so the task's Durable Object can drop duplicates and stale reports.
 */
const base = { seq: z.number().int().nonnegative() };
/**
 * ffmpeg's stderr kept for `GET /v1/tasks/{id}/logs`: its last 256 KiB, which is where ffmpeg
 * says what went wrong. It rides on the terminal report (one request, not a second one). Both
 * sides cut it to this size; a longer one is cut by the edge, never refused with the report.
 */
export const JOB_LOG_MAX_BYTES = 256 * 1024;
const log = z.string().optional();
export const JobEventSchema = z.discriminatedUnion("type", [
  z.object({ ...base, type: z.literal("started") }),
  z.object({
    ...base,
    type: z.literal("progress"),
    /** 0–100, may be fractional; the task shows it floored and below 100 until completed. */
    progress: z.number().min(0).max(100),
    /** Chained tasks: the step running (from 0) and its own 0–100; `progress` is the whole task's, each step weighing the same. */
    step: z.number().int().nonnegative().optional(),
    step_progress: z.number().min(0).max(100).optional(),
    out_time_seconds: z.number().nonnegative().optional(),
    speed: z.number().nonnegative().optional(),
  }),
  z.object({
    ...base,
    type: z.literal("completed"),
    outputs: z.array(z.object({
      filename: z.string(),
      size: z.number().int().nonnegative(),
      metadata: z.record(z.string(), z.unknown()).optional(),
      /**
       * What the edge answered the output's PUT with: its signed word that the object is in R2
       * with this size, so the end needs no R2 `head`. Without a valid one the task's object
       * looks the output up in R2 itself.
       */
      receipt: z.string().optional(),
      /** Chained tasks: the step that wrote it. */
      step: z.number().int().nonnegative().optional(),
    })).min(1),
    log,
  }),
  z.object({
    ...base,
    type: z.literal("failed"),
    error: z.string().max(8192),
    /** Chained tasks: the step that failed (its error starts `step K: `). */
    step: z.number().int().nonnegative().optional(),
    error_code: z.enum(TASK_FAILURE_CODES),
    log,
  }),
  /**
   * The transcoder stopped the job unfinished for its own reasons (it is shutting down, or its
   * work space ran out): nothing went wrong with the task, so the edge starts it again at once
   * without spending one of its retries. `error_code`: what the task fails with once it can be
   * handed back no more.
   */
  z.object({ ...base, type: z.literal("handed_back"), reason: z.string().max(8192), error_code: z.enum(TASK_FAILURE_CODES).optional() }),
]);
export type JobEvent = z.infer<typeof JobEventSchema>;

/** What the edge answers to an output's PUT once the file is in R2. */
export const StoredOutputSchema = z.object({ key: z.string(), size: z.number().int().nonnegative(), md5: z.string(), receipt: z.string() });
export type StoredOutput = z.infer<typeof StoredOutputSchema>;

/** What the edge answers to any report: `cancel` tells a running job to stop. */
export const EventAckSchema = z.object({ ok: z.boolean(), cancel: z.boolean().optional() });
