import type { PolicyLimits } from "../../shared/ffmpeg/index";
import type { ProgressPlan, ProgressSnapshot } from "../ffmpeg/progress";
import type { FileFacts, StreamFacts } from "../ffmpeg/stream-info";
import { JobFailure } from "./failure";

export interface GuardOptions {
  /** No advance of ffmpeg's output time, frame count or size for this long → STALLED. */
  stallMs: number;
  /** Width × height above which an input is refused (a decompression bomb). */
  maxInputPixels: number;
  limits: Pick<PolicyLimits, "maxWidth" | "maxHeight" | "maxPixels" | "maxSampleRate" | "maxDurationSeconds">;
  /** Called once, with the first reason to stop ffmpeg. */
  onViolation: (failure: JobFailure) => void;
}

/**
 * Before its first output, ffmpeg may rightly be busy for long with nothing to show (an output
 * `-ss` decodes and drops everything before it): the stall window is this many times longer.
 */
const FIRST_OUTPUT_GRACE = 5;
/** How far past its planned length an output may run before it is taken for a runaway. */
const OVERRUN_FACTOR = 10;
const OVERRUN_MARGIN_SECONDS = 60;

/**
 * The runtime net under the submission-time policy: what cannot be decided from the command
 * (expressions, a filter's real output, a file's real contents) is checked against what ffmpeg
 * itself says while it runs. A task that stops advancing, runs far past its length, or makes a
 * stream larger than the caps is stopped, so no task can sit on a slot doing nothing.
 */
export class RuntimeGuard {
  private lastAdvance = Date.now();
  private readonly best = { outTime: -1, frame: -1, size: -1 };
  private timer: NodeJS.Timeout | undefined;
  private tripped = false;
  private advancedOnce = false;

  constructor(private readonly options: GuardOptions) {}

  start(): void {
    this.lastAdvance = Date.now();
    this.timer = setInterval(() => {
      const idle = Date.now() - this.lastAdvance;
      if (idle >= this.options.stallMs * (this.advancedOnce ? 1 : FIRST_OUTPUT_GRACE)) {
        this.trip(new JobFailure("STALLED", `ffmpeg made no progress for ${Math.round(idle / 1000)} s and was stopped.`));
      }
    }, Math.max(10, Math.min(1000, this.options.stallMs / 4)));
  }

  stop(): void {
    clearInterval(this.timer);
  }

  progress(snapshot: ProgressSnapshot, plan: ProgressPlan): void {
    const advanced = [this.raise("outTime", snapshot.outTimeSeconds), this.raise("frame", snapshot.frame), this.raise("size", snapshot.totalSize)];
    if (advanced.includes(true)) {
      this.lastAdvance = Date.now();
      this.advancedOnce = true;
    }
    const { maxDurationSeconds } = this.options.limits;
    const bound = Math.min(maxDurationSeconds, plan.totalSeconds === undefined ? maxDurationSeconds : plan.totalSeconds * OVERRUN_FACTOR + OVERRUN_MARGIN_SECONDS);
    if (snapshot.outTimeSeconds !== undefined && snapshot.outTimeSeconds > bound) {
      const expected = plan.totalSeconds === undefined ? "" : ` (its inputs last ${round(plan.totalSeconds)} s)`;
      this.trip(new JobFailure("LIMIT_EXCEEDED", `The output ran past ${round(bound)} s${expected} and was stopped.`));
    }
  }

  input(index: number, facts: FileFacts): void {
    for (const stream of facts.streams) {
      if (stream.width === undefined || stream.height === undefined) continue;
      if (stream.width * stream.height > this.options.maxInputPixels) {
        this.trip(new JobFailure("INPUT_FORMAT_NOT_ALLOWED", `Input ${index + 1} declares ${stream.width}×${stream.height} pixels per frame; the limit is ${this.options.maxInputPixels} pixels.`));
      }
    }
  }

  outputStream(index: number, stream: StreamFacts): void {
    const { maxWidth, maxHeight, maxPixels, maxSampleRate } = this.options.limits;
    const label = `Output ${index + 1}`;
    if (stream.width !== undefined && stream.height !== undefined) {
      if (stream.width > maxWidth || stream.height > maxHeight || stream.width * stream.height > maxPixels) {
        this.trip(new JobFailure("LIMIT_EXCEEDED", `${label} has ${stream.width}×${stream.height} frames; the limit is ${maxWidth}×${maxHeight} and ${maxPixels} pixels.`));
      }
    }
    if (stream.sampleRate !== undefined && stream.sampleRate > maxSampleRate) {
      this.trip(new JobFailure("LIMIT_EXCEEDED", `${label} has audio at ${stream.sampleRate} Hz; the limit is ${maxSampleRate} Hz.`));
    }
  }

  private raise(counter: "outTime" | "frame" | "size", value: number | undefined): boolean {
    if (value === undefined || value <= this.best[counter]) return false;
    this.best[counter] = value;
    return true;
  }

  private trip(failure: JobFailure): void {
    if (this.tripped) return;
    this.tripped = true;
    this.stop();
    this.options.onViolation(failure);
  }
}

function round(seconds: number): number {
  return Math.round(seconds * 10) / 10;
}
