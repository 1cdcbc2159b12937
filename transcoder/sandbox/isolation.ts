import { access, constants } from "node:fs/promises";
import path from "node:path";
import { type Command, runIsolated } from "./process";

/** What /health reports: which layers actually wrap every ffmpeg and ffprobe run. */
export interface IsolationReport {
  network_namespace: boolean;
  unprivileged_uid: boolean;
  rlimits: boolean;
}

export interface ResourceLimits {
  cpuSeconds: number;
  memoryBytes: number;
  /** Largest file the process may write (RLIMIT_FSIZE: a bigger write gets SIGXFSZ). */
  fileBytes: number;
  processes: number;
  openFiles: number;
}

/** nobody/nogroup on Debian: owns nothing, so ffmpeg can read only what is world-readable. */
export const SANDBOX_UID = 65534;
export const SANDBOX_GID = 65534;

/**
 * How every ffmpeg/ffprobe process is wrapped: `unshare --net` (a network namespace with only a
 * downed loopback), `prlimit` (CPU, memory, file size, processes, open files) and `setpriv`
 * (drop to an unprivileged uid with no supplementary groups, and die with the server even if
 * it is SIGKILLed). Each tool execs the next, so the pid spawned is ffmpeg's own and its
 * process group is the whole job.
 */
export class Sandbox {
  constructor(
    private readonly unshare: string[] | undefined,
    private readonly prlimit: string | undefined,
    private readonly setpriv: string[] | undefined,
    /** The user ffmpeg runs as when setpriv drops privileges; the job's output directory must be its. */
    readonly runAs?: { uid: number; gid: number },
    /**
     * Root creates the network namespace and then drops to nobody. A non-root server must drop
     * first: a user namespace made before the drop has no mapping for nobody's uid.
     */
    private readonly dropFirst = false,
  ) {}

  get report(): IsolationReport {
    return { network_namespace: this.unshare !== undefined, unprivileged_uid: this.runAs !== undefined, rlimits: this.prlimit !== undefined };
  }

  wrap(program: string, args: readonly string[], limits: ResourceLimits): Command {
    const chain: string[] = [];
    if (this.setpriv && this.dropFirst) chain.push(...this.setpriv, "--");
    if (this.unshare) chain.push(...this.unshare, "--");
    if (this.prlimit) chain.push(this.prlimit, ...prlimitArgs(limits), "--");
    if (this.setpriv && !this.dropFirst) chain.push(...this.setpriv, "--");
    chain.push(program, ...args);
    const [file, ...rest] = chain;
    return { file: file!, args: rest };
  }
}

function prlimitArgs(limits: ResourceLimits): string[] {
  const pair = (value: number) => `${Math.max(0, Math.floor(value))}:${Math.max(0, Math.floor(value))}`;
  return [
    `--cpu=${pair(limits.cpuSeconds)}`,
    `--as=${pair(limits.memoryBytes)}`,
    `--fsize=${pair(limits.fileBytes)}`,
    `--nproc=${pair(limits.processes)}`,
    `--nofile=${pair(limits.openFiles)}`,
    "--core=0:0",
  ];
}

const PROBE_LIMITS: ResourceLimits = { cpuSeconds: 10, memoryBytes: 2 * 1024 ** 3, fileBytes: 1024 ** 2, processes: 1024, openFiles: 256 };

/**
 * Finds out at boot which layers work here, by running `program -version` under each one
 * alone and then under all of them together. A layer that does not work (no util-linux, not
 * root, no user namespaces) is left out and /health says so; `mode: "off"` uses none.
 */
export async function detectSandbox(mode: "auto" | "off", program: string): Promise<Sandbox> {
  if (mode === "off") return new Sandbox(undefined, undefined, undefined);
  const isRoot = process.getuid?.() === 0;
  const [unshare, prlimit, setpriv] = await Promise.all([findProgram("unshare"), findProgram("prlimit"), findProgram("setpriv")]);
  // Root gets a plain network namespace; anyone else needs a user namespace to be allowed one.
  const netCandidate = unshare ? (isRoot ? [unshare, "--net"] : [unshare, "--user", "--net"]) : undefined;
  const netLayer = netCandidate && (await works(new Sandbox(netCandidate, undefined, undefined), program)) ? netCandidate : undefined;
  const limitLayer = prlimit && (await works(new Sandbox(undefined, prlimit, undefined), program)) ? prlimit : undefined;
  const { layer: userLayer, runAs } = setpriv ? await userLayerFor(setpriv, program) : { layer: undefined, runAs: undefined };
  const combined = new Sandbox(netLayer, limitLayer, userLayer, runAs, !isRoot);
  if (await works(combined, program)) return combined;
  throw new Error(`The sandbox layers work one by one but not together (${JSON.stringify(combined.report)}); set SANDBOX=off to run without them.`);
}

/**
 * setpriv always makes the kernel SIGKILL ffmpeg when the server dies (ffmpeg has its own
 * process group, so nothing else would stop it); as root it also drops to nobody.
 */
async function userLayerFor(setpriv: string, program: string): Promise<{ layer?: string[]; runAs?: { uid: number; gid: number } }> {
  const base = [setpriv, "--no-new-privs"];
  // As root, or as the container's non-root user whose setpriv carries cap_setuid/cap_setgid
  // (transcoder/Dockerfile): either way the probe shows whether the drop really happens.
  const dropping = [...base, `--reuid=${SANDBOX_UID}`, `--regid=${SANDBOX_GID}`, "--clear-groups", "--pdeathsig", "KILL"];
  const runAs = { uid: SANDBOX_UID, gid: SANDBOX_GID };
  if (await works(new Sandbox(undefined, undefined, dropping, runAs), program)) return { layer: dropping, runAs };
  const staying = [...base, "--pdeathsig", "KILL"];
  return (await works(new Sandbox(undefined, undefined, staying), program)) ? { layer: staying } : {};
}

async function works(sandbox: Sandbox, program: string): Promise<boolean> {
  try {
    const run = runIsolated(sandbox.wrap(program, ["-version"], PROBE_LIMITS), { cwd: "/", maxStdoutBytes: 64 * 1024, timeoutMs: 10_000 });
    const result = await run.result;
    return result.code === 0;
  } catch {
    return false;
  }
}

/**
 * Absolute path of a program, searched in PATH now: jobs are spawned with an empty
 * environment, so nothing may depend on PATH later.
 */
export async function findProgram(name: string): Promise<string | undefined> {
  if (name.includes("/")) return (await isExecutable(path.resolve(name))) ? path.resolve(name) : undefined;
  const candidates = (process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin").split(":").filter(Boolean).map((dir) => path.join(dir, name));
  for (const candidate of candidates) {
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
