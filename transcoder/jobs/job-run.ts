import type { FastifyBaseLogger } from "fastify";
import { type CheckedStep, DEFAULT_LIMITS, buildArgv, type ParsedCommand } from "../../shared/ffmpeg/index";
import { JOB_LOG_MAX_BYTES, type TranscodeJob } from "../../shared/schemas/jobs";
import type { TranscoderConfig } from "../config";
import { FORMAT_WHITELIST } from "../ffmpeg/probe";
import { type InputTiming, type ProgressPlan, ProgressParser, percentDone, planProgress } from "../ffmpeg/progress";
import type { FfmpegService } from "../ffmpeg/service";
import { type FileFacts, StreamInfoParser } from "../ffmpeg/stream-info";
import type { Semaphore } from "../lib/semaphore";
import type { JobContext, User } from "../sandbox/isolation";
import type { RunResult } from "../sandbox/process";
import { EdgeClient } from "./edge-client";
import { JobFailure, ranOutOfSpace, workspaceFull } from "./failure";
import { ffmpegFailure, unreadableInput } from "./ffmpeg-failure";
import { RuntimeGuard } from "./guard";
import { downloadInputs, inputsToScreen, screenInputs } from "./inputs";
import { type OutputFile, type OutputLimits, checkExpected, collectOutputs, declaredOutputs, inCommandOrder, onlyDeclared, watchOutputs } from "./outputs";
import { EventReporter, type TerminalReport } from "./reporter";
import { checkedSteps, earlierOutputs, inStep, lastBytes, overallProgress, runSteps, withStepLog } from "./steps";
import { uploadOutputs } from "./upload";
import { type Workspace, createWorkspace, removeWorkspace } from "./workspace";

/** A job's folder on this host and as ffmpeg sees it, with the inputs' paths as ffmpeg sees them. */
interface JobFiles {
  host: Workspace;
  seen: Workspace;
  inputs: string[];
  context: JobContext;
}

export interface JobDeps {
  config: TranscoderConfig;
  ffmpeg: FfmpegService;
  log: FastifyBaseLogger;
  /** ffmpeg slots shared by the transcoder's jobs; absent means no limit here. */
  ffmpegSlots?: Semaphore;
}

const MAX_ERROR_LENGTH = 8192;
const DECODER_PIXEL_HEADROOM = 1.25;
/** Our own outputs may also be single images, which ffprobe reads with image2 because of their extension. */
const OUTPUT_FORMAT_WHITELIST = `${FORMAT_WHITELIST},image2`;

/**
 * Why a job stops when its transcoder shuts down: nothing is wrong with the task, which goes
 * back to the edge (a `handed_back` report) to run again elsewhere.
 */
export class HandBack extends Error {}

/**
 * One job from acceptance to its terminal report: check the command again, download every
 * input, probe it, run ffmpeg in the sandbox, collect and upload the outputs, report. Every way
 * out (failure, cancel, timeout, shutdown) goes through the abort signal, kills ffmpeg's
 * process group and removes the work directory before the terminal report is sent.
 */
export class JobRun {
  private readonly controller = new AbortController();
  private readonly reporter: EventReporter;
  private readonly client: EdgeClient;
  private readonly log: FastifyBaseLogger;
  private readonly workOver = deferred();
  /** ffmpeg's pid (and process group) while it runs. */
  ffmpegPid: number | undefined;
  /** The job stopped because WORK_ROOT ran out of space (set before `workDone` settles). */
  outOfSpace = false;
  /** Milliseconds spent in each phase, logged with "job finished": where a task's time goes. */
  private readonly phases: Record<string, number> = {};
  /**
   * ffmpeg's stderr (its last 256 KiB, local paths replaced) for GET /v1/tasks/{id}/logs, sent
   * with the terminal report, which the edge stores it from before it records the end.
   */
  private ffmpegLog: string | undefined;
  /** A chained task's step running now (TranscodeJob.steps). */
  private step: { index: number; count: number; command: string } | undefined;

  constructor(
    readonly job: TranscodeJob,
    private readonly deps: JobDeps,
  ) {
    this.log = deps.log.child({ task_id: job.task_id });
    this.client = new EdgeClient(job, deps.config.timings.callbackTimeoutMs);
    this.reporter = new EventReporter(this.client, {
      timings: deps.config.timings,
      log: this.log,
      onCancel: () => this.cancel(new JobFailure("CANCELED", "The task was canceled.")),
    });
  }

  /** Settles once no process of the job is left and its work directory is gone. */
  get workDone(): Promise<void> {
    return this.workOver.promise;
  }

  /** Which run of the task this is (TranscodeJob.run). */
  get runNumber(): number {
    return this.job.run ?? 0;
  }

  /** Stops the job for `failure` (cancel, timeout, output cap, shutdown). The first reason wins. */
  cancel(failure: JobFailure | HandBack): void {
    if (!this.controller.signal.aborted) this.controller.abort(failure);
  }

  /** Shortens the retries of the reports still to send (shutting down). */
  hurryReports(withinMs: number): void {
    this.reporter.hurry(withinMs);
  }

  /** Runs the job; resolves once its terminal report is delivered or given up on. */
  async run(): Promise<void> {
    const timeoutSeconds = Math.min(this.job.timeout_seconds, this.deps.config.maxJobSeconds);
    const deadline = setTimeout(
      () => this.cancel(new JobFailure("TIMEOUT", `The job ran longer than its limit of ${timeoutSeconds} s and was stopped.`)),
      timeoutSeconds * 1000,
    );
    this.reporter.start();
    let report: TerminalReport;
    try {
      report = await this.execute(timeoutSeconds);
    } catch (error) {
      report = this.failureReport(error);
    } finally {
      clearTimeout(deadline);
      this.workOver.resolve();
    }
    if (this.ffmpegLog !== undefined && report.type !== "handed_back") report = { ...report, log: this.logWithStop(this.ffmpegLog, report) };
    await this.timed("report", () => this.reporter.finish(report));
    this.log.info({ outcome: report.type, error_code: report.type === "failed" ? report.error_code : undefined, phases_ms: this.phases }, "job finished");
  }

  /** ffmpeg stopped by the service (cancel, time limit, output cap) ends its log saying why, so the log never looks cut off. */
  private logWithStop(log: string, report: TerminalReport): string {
    if (report.type !== "failed" || !this.signal.aborted) return log;
    return lastBytes(`${log}${log === "" || log.endsWith("\n") ? "" : "\n"}[ffedge] ffmpeg was stopped: ${report.error}\n`, JOB_LOG_MAX_BYTES);
  }

  private async timed<T>(phase: string, work: () => Promise<T>): Promise<T> {
    const start = performance.now();
    try {
      return await work();
    } finally {
      this.phases[phase] = Math.round((this.phases[phase] ?? 0) + performance.now() - start);
    }
  }

  private get signal(): AbortSignal {
    return this.controller.signal;
  }

  private async execute(timeoutSeconds: number): Promise<TerminalReport> {
    const steps = checkedSteps(this.job, { allowHosts: this.deps.config.devFetchAllowHosts });
    const { config, ffmpeg } = this.deps;
    const user = ffmpeg.sandbox.acquireUser();
    const workspace = await createWorkspace(config.workRoot, this.job.task_id, user).catch((error: unknown) => {
      ffmpeg.sandbox.releaseUser(user);
      throw error;
    });
    try {
      let firstFile = 0;
      const produced = await runSteps(steps, this.job.steps !== undefined, async (step) => {
        this.step = { index: step.index, count: steps.length, command: this.job.steps?.[step.index]?.command ?? this.job.command };
        const files = await this.runStep(step, workspace, user, timeoutSeconds, firstFile);
        firstFile += step.parsed.inputs.length;
        return files;
      });
      const published = produced.filter((file) => file.publish);
      const receipts = await this.timed("upload", () => uploadOutputs(this.client, published, config.timings, this.signal));
      const files = this.filesFor(workspace, [], user);
      const outputs = [];
      for (const file of published) {
        const metadata = this.job.with_metadata ? await this.timed("metadata", () => this.metadataOf(file, files)) : undefined;
        const receipt = receipts.get(file.filename);
        outputs.push({ filename: file.filename, size: file.size, ...(metadata ? { metadata } : {}), ...(receipt ? { receipt } : {}), ...(this.job.steps ? { step: file.step } : {}) });
      }
      this.signal.throwIfAborted();
      return { type: "completed", outputs };
    } finally {
      await removeWorkspace(workspace);
      ffmpeg.sandbox.releaseUser(user);
    }
  }

  /** One command in the job folder: its inputs downloaded (or an earlier step's outputs), screened, ffmpeg run, its outputs collected. */
  private async runStep(step: CheckedStep, workspace: Workspace, user: User | undefined, timeoutSeconds: number, firstFile: number): Promise<OutputFile[]> {
    const { parsed } = step;
    const { config, ffmpeg } = this.deps;
    const local = await earlierOutputs(step, workspace);
    const hostInputs = await this.timed("download", () => downloadInputs(parsed, workspace, config, this.signal, local, firstFile));
    const files = this.filesFor(workspace, hostInputs, user);
    const argv = buildArgv(withInputGuards(parsed, config.maxInputPixels), { inputPaths: files.inputs, outputDir: files.seen.outDir });
    await this.timed("screen", () => screenInputs(inputsToScreen(parsed, argv, files.inputs), parsed, files.context, files.inputs, ffmpeg, this.signal));
    await this.transcode(parsed, argv, files, timeoutSeconds);
    const declared = declaredOutputs(parsed);
    const outputFiles = inCommandOrder(declared.names, onlyDeclared(declared, await collectOutputs(workspace.outDir, this.outputLimits)));
    checkExpected(declared.names, outputFiles);
    return outputFiles;
  }

  /** The job's folder on this host and as ffmpeg sees it (inside its job root, when it has one). */
  private filesFor(host: Workspace, hostInputs: readonly string[], user: User | undefined): JobFiles {
    const { sandbox } = this.deps.ffmpeg;
    const job = { dir: host.root };
    const seen = { root: sandbox.seenPath(job, host.root), inDir: sandbox.seenPath(job, host.inDir), outDir: sandbox.seenPath(job, host.outDir) };
    return { host, seen, inputs: hostInputs.map((file) => sandbox.seenPath(job, file)), context: { dir: host.root, cwd: seen.outDir, user } };
  }

  private get outputLimits(): OutputLimits {
    const { maxOutputFiles, maxOutputBytes } = this.deps.config;
    return { maxFiles: maxOutputFiles, maxBytes: maxOutputBytes, maxFileBytes: Math.min(maxOutputBytes, this.job.max_output_file_bytes ?? maxOutputBytes) };
  }

  private async transcode(parsed: ParsedCommand, argv: string[], files: JobFiles, timeoutSeconds: number): Promise<void> {
    const { config } = this.deps;
    const guard = new RuntimeGuard({
      stallMs: config.stallSeconds * 1000,
      maxInputPixels: config.maxInputPixels,
      limits: DEFAULT_LIMITS,
      command: parsed,
      onViolation: (failure) => this.cancel(failure),
    });
    // What "100 %" means comes from ffmpeg's own description of its inputs, printed before it starts.
    const timings: InputTiming[] = [];
    let plan: ProgressPlan = planProgress(parsed, timings);
    const streams = new StreamInfoParser({
      onInput: (index, facts) => {
        timings[index] = timingOf(facts);
        plan = planProgress(parsed, timings);
        guard.input(index, facts);
      },
      onOutputStream: (index, stream) => guard.outputStream(index, stream),
      onStreamMapping: (output, stream, copied) => guard.streamMapping(output, stream, copied),
    });
    const progress = new ProgressParser((snapshot) => {
      guard.progress(snapshot, plan);
      const done = percentDone(snapshot, plan);
      if (done === undefined) return;
      // With its receipt time: the tasks benchmark measures from here to the SSE client.
      this.log.debug({ progress: done }, "ffmpeg progress");
      const step = this.job.steps ? this.step : undefined;
      this.reporter.progress({
        type: "progress",
        progress: step ? overallProgress(step.index, step.count, done) : done,
        ...(step ? { step: step.index, step_progress: done } : {}),
        ...(snapshot.outTimeSeconds !== undefined ? { out_time_seconds: snapshot.outTimeSeconds } : {}),
        ...(snapshot.speed !== undefined ? { speed: snapshot.speed } : {}),
      });
    });
    const releaseSlot = await this.timed("slot", async () => this.deps.ffmpegSlots?.acquire(this.signal));
    const stopWatching = watchOutputs(files.host.outDir, this.outputLimits, (failure) => this.cancel(failure));
    let result: RunResult;
    try {
      guard.start();
      const ffmpeg = this.deps.ffmpeg.run(argv, {
        job: files.context,
        signal: this.signal,
        timeoutSeconds,
        maxFileBytes: this.outputLimits.maxFileBytes,
        onStdout: (chunk) => progress.push(chunk),
        onStderr: (chunk) => streams.push(chunk),
      });
      this.ffmpegPid = ffmpeg.pid;
      result = await this.timed("ffmpeg", () => ffmpeg.result);
      const text = withoutLocalPaths(result.stderr, files);
      this.ffmpegLog = this.job.steps && this.step ? withStepLog(this.ffmpegLog, this.step, text) : lastBytes(text, JOB_LOG_MAX_BYTES);
    } finally {
      guard.stop();
      stopWatching();
      releaseSlot?.();
      this.ffmpegPid = undefined;
    }
    this.signal.throwIfAborted();
    if (result.signal === "SIGXFSZ") throw new JobFailure("OUTPUT_LIMIT_EXCEEDED", `An output grew past the limit of ${this.outputLimits.maxFileBytes} bytes for one file.`);
    if (result.signal === "SIGXCPU") throw new JobFailure("TIMEOUT", "ffmpeg used up its CPU-time limit and was stopped.");
    if (result.code !== 0 && ranOutOfSpace(result.stderr)) throw workspaceFull("ffmpeg could not write its outputs");
    if (result.code !== 0) throw unreadableInput(result, streams.inputs, parsed, files.inputs) ?? new JobFailure("FFMPEG_FAILED", ffmpegFailure(withoutLocalPaths(result.stderr, files), result));
  }

  /** ffprobe's description of one output, with our local path replaced by the output's name. */
  private async metadataOf(file: OutputFile, files: JobFiles): Promise<Record<string, unknown> | undefined> {
    const seenPath = this.deps.ffmpeg.sandbox.seenPath(files.context, file.path);
    const outcome = await this.deps.ffmpeg.probe(seenPath, { job: files.context, signal: this.signal, whitelist: OUTPUT_FORMAT_WHITELIST });
    if (outcome.json === undefined) return undefined;
    try {
      const described = JSON.parse(outcome.json) as { format?: Record<string, unknown>; streams?: unknown[] };
      return { format: { ...described.format, filename: file.filename }, streams: described.streams ?? [] };
    } catch {
      return undefined;
    }
  }

  private failureReport(error: unknown): TerminalReport {
    const failure = this.signal.aborted ? this.signal.reason : error;
    if (failure instanceof HandBack) return { type: "handed_back", reason: failure.message.slice(0, MAX_ERROR_LENGTH) };
    // The host's disk, not the task: its folder is gone by now, and another run may well fit.
    if (failure instanceof JobFailure && failure.code === "WORKSPACE_FULL") {
      this.outOfSpace = true;
      return { type: "handed_back", reason: failure.message.slice(0, MAX_ERROR_LENGTH), error_code: failure.code };
    }
    if (failure instanceof JobFailure) {
      const step = this.job.steps ? this.step?.index : undefined;
      const failed = step === undefined ? failure : inStep(step, failure);
      return { type: "failed", error_code: failed.code, error: failed.message.slice(0, MAX_ERROR_LENGTH), ...(step === undefined ? {} : { step }) };
    }
    this.log.error({ err: error }, "job failed unexpectedly");
    return { type: "failed", error_code: "INTERNAL", error: "The transcoder hit an unexpected error while running the job." };
  }
}

/**
 * Every input is opened with ffmpeg's own demuxer allow-list, which judges the bytes when no
 * `-f` is given (inputs with one are judged by `screenInputs` first), and with a pixel cap its
 * decoders enforce before allocating a frame. Decoders count their padded (coded) size, so the
 * cap there has headroom; the exact cap is checked on the size ffmpeg declares (RuntimeGuard).
 */
function withInputGuards(parsed: ParsedCommand, maxInputPixels: number): ParsedCommand {
  const guards = [
    { name: "format_whitelist", base: "format_whitelist", value: FORMAT_WHITELIST },
    { name: "max_pixels", base: "max_pixels", value: String(Math.ceil(maxInputPixels * DECODER_PIXEL_HEADROOM)) },
  ];
  return { ...parsed, inputs: parsed.inputs.map((input) => ({ ...input, options: [...input.options, ...guards] })) };
}

function timingOf(facts: FileFacts): InputTiming {
  const timing: InputTiming = {};
  if (facts.durationSeconds !== undefined) timing.durationSeconds = facts.durationSeconds;
  const rate = facts.streams.find((stream) => stream.kind === "video" && stream.frameRate !== undefined)?.frameRate;
  if (rate !== undefined) timing.frameRate = rate;
  return timing;
}

/** ffmpeg's words with our local paths replaced: inputs by "input N", outputs by their own names. */
function withoutLocalPaths(stderr: string, files: JobFiles): string {
  const { inputs: inputPaths, seen: workspace } = files;
  let text = stderr;
  // Highest index first, so that ".../input-1" never eats the start of ".../input-10".
  for (let index = inputPaths.length - 1; index >= 0; index--) text = text.replaceAll(inputPaths[index]!, `input ${index + 1}`);
  return text.replaceAll(`${workspace.outDir}/`, "").replaceAll(workspace.root, ".");
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}
