import { AppError } from "../../shared/errors";
import { checkFramesFromInputs } from "../../shared/ffmpeg/graph-frames";
import type { ParsedCommand, PolicyLimits } from "../../shared/ffmpeg/index";
import type { VideoSize } from "../../shared/ffmpeg/values";
import type { ProgressPlan, ProgressSnapshot } from "../ffmpeg/progress";
import type { FileFacts, StreamFacts } from "../ffmpeg/stream-info";
import { JobFailure } from "./failure";

export interface GuardOptions {
  /** No advance of ffmpeg's output time, frame count or size for this long → STALLED. */
  stallMs: number;
  /** Width × height above which an input is refused (a decompression bomb). */
  maxInputPixels: number;
  limits: PolicyLimits;
  /** The checked command, whose filter graphs are judged again once the inputs' frame sizes are known. */
  command?: ParsedCommand;
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
  private readonly inputVideo: VideoSize[][] = [];
  /** Streams seen per output, so each output stream's facts meet its mapping line. */
  private readonly outputStreams: number[] = [];
  /** Output streams (`output:stream`) over the frame-rate cap, with why, until their mapping says whether they are copied. */
  private readonly fastStreams = new Map<string, string>();
  /** Whether the graphs were judged with every input described. */
  private graphsSettled = false;
  /** Whether each mapped output stream is copied. */
  private readonly mapped = new Map<string, boolean>();

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
    const video: VideoSize[] = [];
    for (const stream of facts.streams) {
      if (stream.width === undefined || stream.height === undefined) continue;
      if (stream.width * stream.height > this.options.maxInputPixels) {
        this.trip(new JobFailure("INPUT_FORMAT_NOT_ALLOWED", `Input ${index + 1} declares ${stream.width}×${stream.height} pixels per frame; the limit is ${this.options.maxInputPixels} pixels.`));
      }
      video.push({ width: stream.width, height: stream.height });
    }
    this.learnInputVideo(index, video);
  }

  /**
   * Frames the graphs make from input frames (stacked, tiled, scaled to cover) and shrink
   * before an output never show in the outputs' stream information: each time an input
   * reports another video stream, the graphs are judged again with the real sizes, and once
   * more when ffmpeg moves on to its outputs, every input described (see checkFramesFromInputs).
   */
  private learnInputVideo(index: number, video: VideoSize[]): void {
    if (video.length <= (this.inputVideo[index]?.length ?? 0)) return;
    this.inputVideo[index] = video;
    this.judgeGraphFrames(false);
  }

  private judgeGraphFrames(settled: boolean): void {
    if (this.options.command === undefined || this.graphsSettled) return;
    this.graphsSettled = settled;
    try {
      checkFramesFromInputs(this.options.command, this.options.limits, this.inputVideo, settled);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const inputs = this.inputVideo.map((streams, index) => `input ${index + 1}: ${streams.map((size) => `${size.width}×${size.height}`).join(", ")}`);
      this.trip(new JobFailure("LIMIT_EXCEEDED", `${error.detail} (${inputs.join("; ")})`));
    }
  }

  outputStream(index: number, stream: StreamFacts): void {
    this.judgeGraphFrames(true);
    const { maxWidth, maxHeight, maxPixels, maxFrameRate, maxSampleRate } = this.options.limits;
    const label = `Output ${index + 1}`;
    if (stream.width !== undefined && stream.height !== undefined) {
      if (stream.width > maxWidth || stream.height > maxHeight || stream.width * stream.height > maxPixels) {
        this.trip(new JobFailure("LIMIT_EXCEEDED", `${label} has ${stream.width}×${stream.height} frames; the limit is ${maxWidth}×${maxHeight} and ${maxPixels} pixels.`));
      }
    }
    const position = this.outputStreams[index] ?? 0;
    this.outputStreams[index] = position + 1;
    if (stream.frameRate !== undefined && stream.frameRate > maxFrameRate) {
      this.fastStreams.set(`${index}:${position}`, `${label} has ${round(stream.frameRate)} frames per second; the limit is ${maxFrameRate}.`);
      this.judgeFrameRates();
    }
    if (stream.sampleRate !== undefined && stream.sampleRate > maxSampleRate) {
      this.trip(new JobFailure("LIMIT_EXCEEDED", `${label} has audio at ${stream.sampleRate} Hz; the limit is ${maxSampleRate} Hz.`));
    }
  }

  /**
   * ffmpeg's "Stream mapping" line for one output stream. A copied stream makes no frames (the
   * input's bytes bound its work), so the frame-rate cap spares it: a 480 fps slow-motion clip
   * may be copied, not encoded. ffmpeg describes an output of copies before this mapping and
   * one it encodes after it, so a fast stream is judged once both are known.
   */
  streamMapping(output: number, stream: number, copied: boolean): void {
    this.judgeGraphFrames(true);
    this.mapped.set(`${output}:${stream}`, copied);
    this.judgeFrameRates();
  }

  private judgeFrameRates(): void {
    for (const [stream, why] of this.fastStreams) {
      const copied = this.mapped.get(stream);
      if (copied === false) this.trip(new JobFailure("LIMIT_EXCEEDED", why));
      if (copied !== undefined) this.fastStreams.delete(stream);
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
