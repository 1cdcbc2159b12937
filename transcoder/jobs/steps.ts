import { lstat } from "node:fs/promises";
import path from "node:path";
import { AppError } from "../../shared/errors";
import { type CheckedStep, type CommandPolicyOptions, checkCommand, checkSteps, stepReferenceOf } from "../../shared/ffmpeg/index";
import { JOB_LOG_MAX_BYTES, type TranscodeJob } from "../../shared/schemas/jobs";
import { JobFailure } from "./failure";
import type { OutputFile } from "./outputs";
import type { Workspace } from "./workspace";

/** A file a step wrote, with the step and whether it is published (the last step's always are). */
export interface StepOutput extends OutputFile {
  step: number;
  publish: boolean;
}

/**
 * A job's steps, judged again by the policy: a chained task's (shared/ffmpeg/steps.ts), or its
 * one command as a single step. A refusal is COMMAND_REJECTED, naming the step.
 */
export function checkedSteps(job: TranscodeJob, options: CommandPolicyOptions): CheckedStep[] {
  try {
    if (job.steps) return checkSteps(job.steps, options);
    const parsed = checkCommand(job.command, options);
    return [{ index: 0, parsed, publish: true, outputs: parsed.outputs.map((output) => output.filename) }];
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const token = typeof error.extra.token === "string" && !error.detail.includes(error.extra.token) ? ` (at '${error.extra.token}')` : "";
    throw new JobFailure("COMMAND_REJECTED", `${error.detail}${token}`);
  }
}

/**
 * Runs the steps in order in one job folder: each step's outputs stay in `out/`, where later
 * steps read them (no download) and the caps on `out/` hold for the task as a whole. The first
 * step that fails ends the job, its failure named by the step. Returns every step's outputs.
 */
export async function runSteps(steps: readonly CheckedStep[], chained: boolean, runStep: (step: CheckedStep) => Promise<OutputFile[]>): Promise<StepOutput[]> {
  const produced: StepOutput[] = [];
  for (const step of steps) {
    try {
      const files = await runStep(step);
      produced.push(...files.map((file) => ({ ...file, step: step.index, publish: step.publish })));
    } catch (error) {
      throw chained && error instanceof JobFailure ? inStep(step.index, error) : error;
    }
  }
  return produced;
}

/** A failure as a chained task reports it: `step K: …`. */
export function inStep(index: number, failure: JobFailure): JobFailure {
  return failure.message.startsWith(`step ${index}: `) ? failure : new JobFailure(failure.code, `step ${index}: ${failure.message}`);
}

/**
 * Where each input of a step is read from: an earlier step's output is its file in `out/`
 * (a regular file: anything else ffmpeg may have been made to leave there is refused);
 * undefined for a URL, which is downloaded.
 */
export async function earlierOutputs(step: CheckedStep, workspace: Workspace): Promise<(string | undefined)[]> {
  return Promise.all(
    step.parsed.inputs.map(async (input) => {
      const reference = stepReferenceOf(input.url);
      if (!reference) return undefined;
      const file = path.join(workspace.outDir, reference.filename);
      // Missing or unreadable is answered just below: the step has nothing to read.
      const info = await lstat(file).catch(() => undefined);
      if (!info?.isFile()) throw new JobFailure("OUTPUT_MISSING", `Step ${reference.step} left no file '${reference.filename}' for this step to read.`);
      return file;
    }),
  );
}

/** The whole task's progress when step `index` of `count` is `done` percent through: each step weighs the same. */
export function overallProgress(index: number, count: number, done: number): number {
  return ((index + done / 100) / count) * 100;
}

/**
 * The job's log with one step's ffmpeg log added under a header naming the step and its command;
 * each step keeps at most its share of JOB_LOG_MAX_BYTES (its end: where ffmpeg says what went wrong).
 */
export function withStepLog(log: string | undefined, step: { index: number; count: number; command: string }, text: string): string {
  const share = Math.floor(JOB_LOG_MAX_BYTES / step.count) - 1024;
  return `${log ?? ""}[ffedge] step ${step.index}: ${step.command.slice(0, 512)}\n${lastBytes(text, share)}${text.endsWith("\n") || text === "" ? "" : "\n"}`;
}

/** The end of `text` in at most `max` UTF-8 bytes (a character cut in two becomes U+FFFD). */
export function lastBytes(text: string, max: number): string {
  const bytes = Buffer.from(text);
  return bytes.byteLength <= max ? text : bytes.subarray(bytes.byteLength - max).toString("utf8").slice(-max);
}
