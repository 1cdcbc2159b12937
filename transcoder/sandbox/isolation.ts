import { access, chmod, constants, lstat, mkdir, mkdtemp, readlink, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ownerTag } from "../lib/owner";
import { type Command, runIsolated } from "./process";

/** What /health reports: which layers actually wrap every ffmpeg and ffprobe run. */
export interface IsolationReport {
  network_namespace: boolean;
  unprivileged_uid: boolean;
  /** Each job's ffmpeg runs as a uid of its own, so jobs cannot signal, trace or read each other. */
  per_job_uid: boolean;
  /** Each job's ffmpeg sees a root holding only read-only system files and its own job folder. */
  job_root: boolean;
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

export interface User {
  uid: number;
  gid: number;
}

/** One job as the sandbox needs to know it: its folder on this host and the user it runs as. */
export interface JobContext {
  /** The job folder on this host (mounted as JOB_MOUNT inside the job root). */
  dir: string;
  /** Working directory, as ffmpeg sees it. */
  cwd: string;
  user?: User | undefined;
}

/** nobody/nogroup on Debian: owns nothing, so ffmpeg can read only what is world-readable. */
export const SANDBOX_UID = 65534;
export const SANDBOX_GID = 65534;
/** Where a job's folder appears inside its job root. */
export const JOB_MOUNT = "/job";
/** First uid (and gid) handed to jobs when each gets its own: far above login and system users. */
export const JOB_UID_BASE = 200_000;
const UIDS_PER_TRANSCODER = 1024;

/**
 * How every ffmpeg/ffprobe process is wrapped, each tool exec'ing the next so the pid spawned is
 * ffmpeg's own and its process group is the whole job:
 * - `unshare --net` (a network namespace with only a downed loopback), with `--mount` when the
 *   job root is available: `job-root.sh` then bind-mounts read-only system files and the job's
 *   folder into a skeleton and chroots there, so no other file of the host exists for ffmpeg;
 * - `prlimit` (CPU, memory, file size, processes, open files, no core dumps);
 * - `setpriv` (drop to an unprivileged uid, one per job when the server is root, with no
 *   supplementary groups and no new privileges, and die with the server even if it is SIGKILLed).
 */
export class Sandbox {
  private readonly freeUids: number[] = [];
  /**
   * Transcoders sharing a host draw from ranges of their own (by pid, unique among the living):
   * jobs of two transcoders never share a uid either.
   */
  private nextUid = JOB_UID_BASE + (process.pid % 2 ** 21) * UIDS_PER_TRANSCODER;

  constructor(
    private readonly layers: {
      unshare?: { file: string; flags: string[] } | undefined;
      prlimit?: string | undefined;
      setpriv?: string | undefined;
      /** The user ffmpeg runs as when setpriv drops privileges (nobody); the job's output directory must be its. */
      runAs?: User | undefined;
      /** Root can drop to any uid: each job gets its own. */
      perJobUid?: boolean;
      /** `job-root.sh`, the skeleton root it mounts into and the fstab of those mounts (the server's own, made at boot). */
      jobRoot?: JobRoot | undefined;
      /**
       * Root creates the namespaces and then drops to nobody. A non-root server must drop
       * first: a user namespace made before the drop has no mapping for nobody's uid.
       */
      dropFirst?: boolean;
    },
  ) {}

  get report(): IsolationReport {
    const { unshare, prlimit, runAs, perJobUid, jobRoot } = this.layers;
    return {
      network_namespace: unshare !== undefined,
      unprivileged_uid: runAs !== undefined,
      per_job_uid: perJobUid === true,
      job_root: jobRoot !== undefined,
      rlimits: prlimit !== undefined,
    };
  }

  /** Removes the skeleton of the job root (the server is closing). */
  async dispose(): Promise<void> {
    if (this.layers.jobRoot) await rm(this.layers.jobRoot.home, { recursive: true, force: true });
  }

  get runAs(): User | undefined {
    return this.layers.runAs;
  }

  /** A uid of its own for a job (release it when the job is over), or the shared one. */
  acquireUser(): User | undefined {
    if (!this.layers.perJobUid) return this.layers.runAs;
    const uid = this.freeUids.pop() ?? this.nextUid++;
    return { uid, gid: uid };
  }

  releaseUser(user: User | undefined): void {
    if (this.layers.perJobUid && user && user.uid >= JOB_UID_BASE) this.freeUids.push(user.uid);
  }

  /** A path of a job's folder as ffmpeg sees it (the folder is mounted at JOB_MOUNT in the job root). */
  seenPath(job: Pick<JobContext, "dir">, hostPath: string): string {
    if (!this.layers.jobRoot) return hostPath;
    const relative = path.relative(job.dir, hostPath);
    return relative === "" ? JOB_MOUNT : path.posix.join(JOB_MOUNT, relative);
  }

  /** The directory to spawn in on this host: the job's working directory, unless the job root sets it. */
  spawnCwd(job: JobContext): string {
    return this.layers.jobRoot ? job.dir : job.cwd;
  }

  wrap(program: string, args: readonly string[], limits: ResourceLimits, job?: JobContext): Command {
    const { unshare, prlimit, setpriv, dropFirst, jobRoot } = this.layers;
    const user = job?.user ?? this.layers.runAs;
    const chain: string[] = [];
    if (setpriv && dropFirst) chain.push(...setprivArgs(setpriv, user), "--");
    const mount = unshare && jobRoot && job ? { ...jobRoot, ...job } : undefined;
    // A non-root server mounts as root of a user namespace of its own; ffmpeg must not keep that root's capabilities.
    const inUserNamespace = unshare?.flags.includes("--user") === true;
    if (unshare) {
      const mountFlags = mount ? [...(inUserNamespace ? ["--map-root-user"] : []), "--mount", "--propagation", "private"] : [];
      chain.push(unshare.file, ...unshare.flags, ...mountFlags, "--");
      if (mount) chain.push("/bin/sh", mount.script, mount.skeleton, mount.fstab, mount.dir, mount.cwd);
    }
    if (prlimit) chain.push(prlimit, ...prlimitArgs(limits), "--");
    if (setpriv && !dropFirst) chain.push(...setprivArgs(setpriv, user), "--");
    if (setpriv && mount && inUserNamespace) chain.push(setpriv, "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--");
    chain.push(program, ...args);
    const [file, ...rest] = chain;
    // Dropped before anything else, the whole group runs as `user`, which this server is not.
    const killAs = setpriv && dropFirst && user ? [setpriv, "--no-new-privs", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "/bin/sh", "-c", 'kill -KILL "-$0"'] : undefined;
    return { file: file!, args: rest, ...(killAs ? { killAs } : {}) };
  }
}

function setprivArgs(setpriv: string, user: User | undefined): string[] {
  const drop = user ? [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups"] : [];
  return [setpriv, "--no-new-privs", ...drop, "--pdeathsig", "KILL"];
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
 * `workRoot` receives the skeleton of the job root.
 */
export async function detectSandbox(mode: "auto" | "off", program: string, workRoot: string): Promise<Sandbox> {
  if (mode === "off") return new Sandbox({});
  const isRoot = process.getuid?.() === 0;
  const [unshareFile, prlimit, setpriv] = await Promise.all([findProgram("unshare"), findProgram("prlimit"), findProgram("setpriv")]);
  // Root gets a plain network namespace; anyone else needs a user namespace to be allowed one.
  const netCandidate = unshareFile ? { file: unshareFile, flags: isRoot ? ["--net"] : ["--user", "--net"] } : undefined;
  const unshare = netCandidate && (await works(new Sandbox({ unshare: netCandidate }), program)) ? netCandidate : undefined;
  const limitLayer = prlimit && (await works(new Sandbox({ prlimit }), program)) ? prlimit : undefined;
  const { setpriv: userLayer, runAs } = setpriv ? await userLayerFor(setpriv, program) : {};
  // Only root drops to any uid it likes, and mounts: a non-root server keeps nobody and the host's tree.
  const perJobUid = isRoot && runAs !== undefined && (await works(new Sandbox({ setpriv: userLayer, runAs: { uid: JOB_UID_BASE, gid: JOB_UID_BASE } }), program));
  // Root mounts in a mount namespace; anyone else needs a user namespace that maps it to root there.
  const jobRoot = unshare && setpriv ? await jobRootFor(unshare, setpriv, program, workRoot) : undefined;
  const combined = new Sandbox({ unshare, prlimit: limitLayer, setpriv: userLayer, runAs, perJobUid, jobRoot, dropFirst: !isRoot });
  if (await works(combined, program, jobRoot ? await scratchJob(workRoot) : undefined)) return combined;
  throw new Error(`The sandbox layers work one by one but not together (${JSON.stringify(combined.report)}); set SANDBOX=off to run without them.`);
}

/**
 * setpriv always makes the kernel SIGKILL ffmpeg when the server dies (ffmpeg has its own
 * process group, so nothing else would stop it); as root it also drops to nobody.
 */
async function userLayerFor(setpriv: string, program: string): Promise<{ setpriv?: string; runAs?: User }> {
  // As root, or as the container's non-root user whose setpriv carries cap_setuid/cap_setgid
  // (transcoder/Dockerfile): either way the probe shows whether the drop really happens.
  const runAs = { uid: SANDBOX_UID, gid: SANDBOX_GID };
  if (await works(new Sandbox({ setpriv, runAs }), program)) return { setpriv, runAs };
  return (await works(new Sandbox({ setpriv }), program)) ? { setpriv } : {};
}

/** System paths a job root shows read-only: libraries, the sandbox's own programs, fonts for subtitles. */
const JOB_ROOT_PATHS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/ld.so.cache", "/etc/alternatives", "/etc/fonts", "/var/cache/fontconfig", "/dev/null", "/dev/urandom"];

/** Where the job root's pieces are: all in `home`, so removing it removes them. */
interface JobRoot {
  script: string;
  home: string;
  skeleton: string;
  fstab: string;
}

/**
 * Makes this server's skeleton of the job root in WORK_ROOT (`.root@<pid>.<start>-<random>/root`,
 * swept with the job folders when the server is gone): a mount point for each system path this
 * host has (symlinks such as /lib -> usr/lib copied as they are) and `job/`. Nothing is mounted
 * on the host: each job mounts into it in its own mount namespace. Beside it, the fstab of the
 * read-only system mounts, so that a job makes them all with one `mount -a` (one process instead
 * of one per path: ~1.5 ms of fork and exec each). Undefined when that does not work.
 */
async function jobRootFor(unshare: { file: string; flags: string[] }, setpriv: string, program: string, workRoot: string): Promise<JobRoot | undefined> {
  const script = fileURLToPath(new URL("./job-root.sh", import.meta.url));
  await mkdir(workRoot, { recursive: true, mode: 0o711 });
  const home = await mkdtemp(path.join(workRoot, `.root@${ownerTag()}-`));
  await chmod(home, 0o711);
  const skeleton = path.join(home, "root");
  await mkdir(skeleton, { mode: 0o755 });
  const mounts: string[] = [];
  for (const hostPath of JOB_ROOT_PATHS) {
    // A path this image lacks is not mounted.
    const info = await lstat(hostPath).catch(() => undefined);
    if (!info) continue;
    const target = path.join(skeleton, hostPath);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
    if (info.isSymbolicLink()) {
      await symlink(await readlink(hostPath), target);
      continue;
    }
    if (info.isDirectory()) await mkdir(target, { mode: 0o755 });
    else await writeFile(target, "", { mode: 0o644 });
    // Devices stay devices (ffmpeg writes to /dev/null); everything else is read-only and inert.
    mounts.push(fstabLine(hostPath, target, hostPath.startsWith("/dev/") ? "bind" : "bind,ro,nosuid,nodev"));
  }
  await mkdir(path.join(skeleton, JOB_MOUNT), { mode: 0o755 });
  const fstab = path.join(home, "fstab");
  await writeFile(fstab, mounts.join(""), { mode: 0o644 });
  const jobRoot = { script, home, skeleton, fstab };
  if (await works(new Sandbox({ unshare, setpriv, jobRoot }), program, await scratchJob(workRoot))) return jobRoot;
  await rm(home, { recursive: true, force: true });
  return undefined;
}

/** One fstab(5) line; whitespace and backslashes in paths are written as the octal escapes mount reads. */
function fstabLine(source: string, target: string, options: string): string {
  const escape = (value: string) => value.replace(/[\\ \t\n]/g, (char) => `\\${char.charCodeAt(0).toString(8).padStart(3, "0")}`);
  return `${escape(source)} ${escape(target)} none ${options} 0 0\n`;
}

async function scratchJob(workRoot: string): Promise<JobContext> {
  const dir = await mkdtemp(path.join(workRoot, `.probe@${ownerTag()}-`));
  // As a real job's folder (jobs/workspace.ts): the chain mounts it as nobody inside a user namespace.
  await chmod(dir, 0o711);
  return { dir, cwd: JOB_MOUNT };
}

async function works(sandbox: Sandbox, program: string, job?: JobContext): Promise<boolean> {
  try {
    const run = runIsolated(sandbox.wrap(program, ["-version"], PROBE_LIMITS, job), { cwd: "/", maxStdoutBytes: 64 * 1024, timeoutMs: 10_000 });
    const result = await run.result;
    return result.code === 0;
  } catch {
    return false;
  } finally {
    if (job) await rm(job.dir, { recursive: true, force: true });
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
