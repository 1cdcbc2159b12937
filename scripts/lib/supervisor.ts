import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";

export interface ServiceSpec {
  label: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** True while the service answers. A service that exits, or fails this `maxFailedChecks` times in a row once it has answered, is restarted. */
  healthy: () => Promise<boolean>;
  /** The lines to print for each line the service writes (default: that line). */
  output?: (line: string) => string[];
}

export interface SupervisorOptions {
  checkEveryMs?: number;
  maxFailedChecks?: number;
  /** First delay before a restart; doubles for each restart in a row, up to `maxBackoffMs`. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** How long a child may take to stop after SIGTERM before its whole group is killed. */
  stopGraceMs?: number;
  log?: (line: string) => void;
}

/**
 * Runs one service in its own process group (so it can be stopped whole, grandchildren such
 * as workerd and ffmpeg included) and keeps it running: when it exits, or stops answering its
 * health check (wrangler can outlive a killed workerd), it is stopped and started again after
 * a backoff, and says so.
 */
export class Supervisor {
  private child: ChildProcess | undefined;
  private stopping = false;
  private restarts = 0;
  private answeredOnce = false;
  private failedChecks = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly options: Required<SupervisorOptions>;

  constructor(private readonly spec: ServiceSpec, options: SupervisorOptions = {}) {
    this.options = {
      checkEveryMs: 2_000,
      maxFailedChecks: 3,
      backoffMs: 1_000,
      maxBackoffMs: 30_000,
      stopGraceMs: 10_000,
      log: (line) => process.stderr.write(`${line}\n`),
      ...options,
    };
  }

  /** How many times the service was started again. */
  get restartCount(): number {
    return this.restarts;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    this.stopping = false;
    this.launch();
    this.timer = setInterval(() => void this.check(), this.options.checkEveryMs);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearInterval(this.timer);
    if (this.child) await stopGroup(this.child, this.options.stopGraceMs);
  }

  private launch(): void {
    const { label, command, args, env, cwd, output = (line) => [line] } = this.spec;
    // stdin is the watchdog's lifeline to this process: see WATCHDOG.
    const child = spawn(process.execPath, ["-e", WATCHDOG, command, ...args], { cwd, env, detached: true, stdio: ["pipe", "pipe", "pipe"] });
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) createInterface({ input: stream }).on("line", (line) => {
        for (const shown of output(line)) process.stdout.write(`[${label}] ${shown}\n`);
      });
    }
    child.once("exit", (code, signal) => {
      if (this.stopping || this.child !== child) return;
      this.restart(`exited (${signal ?? `code ${code}`})`);
    });
    this.child = child;
    this.answeredOnce = false;
    this.failedChecks = 0;
  }

  private async check(): Promise<void> {
    if (this.stopping || !this.child) return;
    const child = this.child;
    const healthy = await this.spec.healthy().catch(() => false);
    if (this.stopping || this.child !== child) return;
    if (healthy) {
      if (this.answeredOnce === false && this.restarts > 0) this.options.log(`[start] ${this.spec.label} is back.`);
      this.answeredOnce = true;
      this.failedChecks = 0;
      return;
    }
    // Before its first answer the service is still starting (wrangler builds for seconds).
    if (this.answeredOnce && ++this.failedChecks >= this.options.maxFailedChecks) this.restart(`stopped answering (${this.failedChecks} checks in a row)`);
  }

  private restart(reason: string): void {
    const child = this.child;
    this.child = undefined;
    const delay = Math.min(this.options.maxBackoffMs, this.options.backoffMs * 2 ** Math.min(this.restarts, 10));
    this.restarts++;
    this.options.log(`[start] ${this.spec.label} ${reason}; restarting it in ${(delay / 1000).toFixed(1)} s (restart ${this.restarts}).`);
    void (async () => {
      if (child) await stopGroup(child, this.options.stopGraceMs);
      await new Promise((resolve) => setTimeout(resolve, delay));
      if (!this.stopping) this.launch();
    })();
  }
}

/**
 * Leads the service's process group: runs the service in it and, when its stdin reaches EOF, kills
 * the whole group. The kernel closes that pipe however the supervisor dies (SIGKILL, a closed
 * terminal, a cancelled CI job), so the service and whatever it started (wrangler's workerd) die
 * with it. PR_SET_PDEATHSIG would reach only the direct child, and Node cannot set it anyway.
 * Signals sent to the group reach the service directly; the watchdog outlives them to report how
 * the service ended, by ending the same way.
 */
const WATCHDOG = `
const { spawn } = require("node:child_process");
const [command, ...args] = process.argv.slice(1);
const killGroup = () => { try { process.kill(-process.pid, "SIGKILL"); } catch {} };
const ignore = () => {};
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, ignore);
process.stdin.on("end", killGroup).on("error", killGroup).resume();
const child = spawn(command, args, { stdio: ["ignore", "inherit", "inherit"] });
child.on("error", (error) => { process.stderr.write(command + ": " + error.message + "\\n"); process.exit(127); });
child.on("exit", (code, signal) => {
  if (signal === null) process.exit(code);
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
});
`;

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // The group is already gone.
  }
}

/** SIGTERM to the child's group, SIGKILL to the group once the child exits or the grace period ends. */
export function stopGroup(child: ChildProcess, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const finish = () => {
      clearTimeout(escalate);
      // Grandchildren (workerd under wrangler) share the group: make sure none is left.
      signalGroup(child, "SIGKILL");
      resolve();
    };
    const escalate = setTimeout(() => signalGroup(child, "SIGKILL"), graceMs);
    if (child.exitCode !== null || child.signalCode !== null) return finish();
    child.once("exit", finish);
    signalGroup(child, "SIGTERM");
  });
}
