import { spawn } from "node:child_process";

/** A program and its arguments, spawned without a shell. */
export interface Command {
  file: string;
  args: string[];
  /**
   * How to signal the process group when this server may not: a program whose last argument
   * will be the group's id. A non-root server drops every job to another uid (nobody), and only
   * that uid may signal it (kill(2): EPERM otherwise).
   */
  killAs?: string[];
}

export interface RunOptions {
  cwd: string;
  /** Aborting kills the whole process group. */
  signal?: AbortSignal;
  /** Receives stdout as it arrives (ffmpeg's progress); otherwise stdout is collected. */
  onStdout?: (chunk: Buffer) => void;
  /** Receives stderr as it arrives (ffmpeg's stream descriptions), besides keeping its tail. */
  onStderr?: (chunk: Buffer) => void;
  /** Collected stdout beyond this kills the process (ffprobe answering far more than JSON for one file). */
  maxStdoutBytes?: number;
  /** Only the last this-many bytes of stderr are kept. */
  maxStderrBytes?: number;
  /** Wall-clock limit; the group is killed when it passes. */
  timeoutMs?: number;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  /** The end of stderr (see maxStderrBytes). */
  stderr: string;
  /** True when the run was stopped by the abort signal, its timeout or its stdout limit. */
  killed: boolean;
}

export interface IsolatedProcess {
  pid: number;
  result: Promise<RunResult>;
}

const DEFAULT_STDERR_BYTES = 256 * 1024;

/**
 * Spawns a command without a shell, with an empty environment (no secret of ours reaches it)
 * and in its own process group, so that killing `-pid` takes everything it started with it.
 * `result` settles only once the process has exited and its pipes are closed.
 */
export function runIsolated(command: Command, options: RunOptions): IsolatedProcess {
  const child = spawn(command.file, command.args, { cwd: options.cwd, env: {}, detached: true, shell: false, stdio: ["ignore", "pipe", "pipe"] });
  const stdout: Buffer[] = [];
  let stdoutBytes = 0;
  const stderr = new TailBuffer(options.maxStderrBytes ?? DEFAULT_STDERR_BYTES);
  let killed = false;

  const killGroup = () => {
    killed = true;
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch (error) {
      // ESRCH: already gone. EPERM: the group runs as another uid; kill it as that uid.
      if ((error as NodeJS.ErrnoException).code === "EPERM" && command.killAs) {
        const [file, ...args] = command.killAs;
        spawn(file!, [...args, String(child.pid)], { env: {}, stdio: "ignore" }).on("error", () => {});
      }
    }
  };
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(killGroup, options.timeoutMs);
  options.signal?.addEventListener("abort", killGroup, { once: true });
  if (options.signal?.aborted) killGroup();

  child.stdout.on("data", (chunk: Buffer) => {
    if (options.onStdout) return options.onStdout(chunk);
    stdoutBytes += chunk.length;
    if (options.maxStdoutBytes !== undefined && stdoutBytes > options.maxStdoutBytes) return killGroup();
    stdout.push(chunk);
  });
  child.stderr.on("data", (chunk: Buffer) => {
    stderr.push(chunk);
    options.onStderr?.(chunk);
  });

  const result = new Promise<RunResult>((resolve, reject) => {
    child.once("error", (error) => {
      cleanup();
      reject(error);
    });
    child.once("close", (code, signal) => {
      cleanup();
      resolve({ code, signal, stdout: Buffer.concat(stdout), stderr: stderr.text(), killed });
    });
  });
  function cleanup() {
    if (timer) clearTimeout(timer);
    options.signal?.removeEventListener("abort", killGroup);
  }
  return { pid: child.pid ?? -1, result };
}

/** Keeps the last `capacity` bytes written to it. */
class TailBuffer {
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(private readonly capacity: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - (this.chunks[0]?.length ?? 0) >= this.capacity && this.chunks.length > 1) {
      this.size -= this.chunks.shift()!.length;
    }
  }

  text(): string {
    const all = Buffer.concat(this.chunks);
    return all.subarray(Math.max(0, all.length - this.capacity)).toString("utf8");
  }
}
