import os from "node:os";
import type { TranscoderConfig } from "../config";
import { type JobContext, type ResourceLimits, type Sandbox, detectSandbox, findProgram } from "../sandbox/isolation";
import { type IsolatedProcess, runIsolated } from "../sandbox/process";

export interface ProbeOutcome {
  /** ffprobe's JSON, when it could read the file. */
  json?: string;
  /** ffmpeg itself refused the file's format (it is not on the whitelist). */
  formatRefused: boolean;
}

export interface FfmpegRunOptions {
  /** The job whose folder ffmpeg works in; paths in the argv are as `Sandbox.seenPath` gives them. */
  job: JobContext;
  signal: AbortSignal;
  /** Sets the CPU-time cap: a job may keep every core busy for its whole wall-clock limit. */
  timeoutSeconds: number;
  /** The largest file ffmpeg may write (RLIMIT_FSIZE: a write past it kills ffmpeg with SIGXFSZ). */
  maxFileBytes: number;
  onStdout: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
}

const PROBE_STDOUT_BYTES = 4 * 1024 * 1024;
/**
 * How much of a file a format-only probe analyses for streams. The format itself is detected as
 * ffmpeg always detects it (`formatprobesize`, up to 1 MiB), so the verdict is the same one a
 * filter re-opening the file would reach.
 */
const HEADER_PROBE_BYTES = 32 * 1024;
/** ffmpeg is one process with threads; the cap only stops anything that would fork. */
const MAX_PROCESSES = 1024;
const MAX_OPEN_FILES = 1024;

/**
 * The only way the service runs ffmpeg and ffprobe: pinned binaries, inside the sandbox the
 * host supports, with resource limits from the configuration.
 */
export class FfmpegService {
  private constructor(
    readonly ffmpegPath: string,
    readonly ffprobePath: string,
    readonly version: string,
    readonly sandbox: Sandbox,
    private readonly config: TranscoderConfig,
  ) {}

  /** Finds the binaries, reads ffmpeg's version and detects the sandbox; throws when ffmpeg is unusable. */
  static async create(config: TranscoderConfig): Promise<FfmpegService> {
    const ffmpeg = await findProgram(config.ffmpegPath);
    if (!ffmpeg) throw new Error(`ffmpeg was not found at '${config.ffmpegPath}' (set FFMPEG_PATH).`);
    const ffprobe = await findProgram(config.ffprobePath);
    if (!ffprobe) throw new Error(`ffprobe was not found at '${config.ffprobePath}' (set FFPROBE_PATH).`);
    const version = await readVersion(ffmpeg);
    const sandbox = await detectSandbox(config.sandbox, ffmpeg, config.workRoot);
    return new FfmpegService(ffmpeg, ffprobe, version, sandbox, config);
  }

  /**
   * ffprobe's JSON description of one local file, read only with the demuxers in `whitelist`.
   * The format is always judged from the file's bytes (never a user's `-f`). `formatOnly` asks
   * for the demuxer name alone and reads no more than the header.
   */
  async probe(file: string, options: { job: JobContext; signal: AbortSignal; whitelist: string; formatOnly?: boolean }): Promise<ProbeOutcome> {
    const args = ["-v", "error", "-of", "json", "-protocol_whitelist", "file", "-format_whitelist", options.whitelist];
    if (options.formatOnly) args.push("-show_entries", "format=format_name", "-probesize", String(HEADER_PROBE_BYTES), "-analyzeduration", "0");
    else args.push("-show_format", "-show_streams");
    args.push("-i", file);
    const limits: ResourceLimits = {
      cpuSeconds: Math.ceil(this.config.timings.probeTimeoutMs / 1000) * os.availableParallelism(),
      memoryBytes: this.config.maxMemoryBytes,
      fileBytes: 0,
      processes: MAX_PROCESSES,
      openFiles: MAX_OPEN_FILES,
    };
    const run = runIsolated(this.sandbox.wrap(this.ffprobePath, args, limits, options.job), {
      cwd: this.sandbox.spawnCwd(options.job),
      signal: options.signal,
      maxStdoutBytes: PROBE_STDOUT_BYTES,
      maxStderrBytes: 16 * 1024,
      timeoutMs: this.config.timings.probeTimeoutMs,
    });
    const result = await run.result;
    const formatRefused = /Format not on whitelist/i.test(result.stderr);
    return result.code === 0 && !result.killed ? { json: result.stdout.toString("utf8"), formatRefused } : { formatRefused };
  }

  /** Starts ffmpeg with an argv from `buildArgv`; killing happens through `signal`. */
  run(argv: readonly string[], options: FfmpegRunOptions): IsolatedProcess {
    const limits: ResourceLimits = {
      cpuSeconds: options.timeoutSeconds * os.availableParallelism() + 30,
      memoryBytes: this.config.maxMemoryBytes,
      fileBytes: options.maxFileBytes,
      processes: MAX_PROCESSES,
      openFiles: MAX_OPEN_FILES,
    };
    return runIsolated(this.sandbox.wrap(this.ffmpegPath, argv, limits, options.job), { cwd: this.sandbox.spawnCwd(options.job), signal: options.signal, onStdout: options.onStdout, onStderr: options.onStderr });
  }
}

async function readVersion(ffmpeg: string): Promise<string> {
  const run = runIsolated({ file: ffmpeg, args: ["-version"] }, { cwd: "/", maxStdoutBytes: 64 * 1024, timeoutMs: 10_000 });
  const result = await run.result;
  const version = /ffmpeg version (\S+)/.exec(result.stdout.toString("utf8"))?.[1];
  if (result.code !== 0 || !version) throw new Error(`'${ffmpeg} -version' did not answer as ffmpeg does.`);
  return version;
}
