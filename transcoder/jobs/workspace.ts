import { readFileSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readFile, readdir, rm, stat } from "node:fs/promises";
import path from "node:path";

/** One job's directory: inputs are downloaded into `in/`, ffmpeg writes only into `out/`. */
export interface Workspace {
  root: string;
  inDir: string;
  outDir: string;
}

export type Owner = { uid: number; gid: number } | undefined;

export function inputPath(workspace: Workspace, index: number): string {
  return path.join(workspace.inDir, `input-${index}`);
}

/**
 * Makes sure WORK_ROOT exists and that a sandboxed ffmpeg (another uid) can reach into it:
 * every directory above a job's directory needs the search bit for "others". Fails at boot,
 * with the directory to fix, rather than on the first job.
 */
export async function prepareWorkRoot(workRoot: string, owner: Owner): Promise<void> {
  await mkdir(workRoot, { recursive: true, mode: 0o711 });
  if (!owner) return;
  await chmod(workRoot, 0o711);
  for (let dir = path.dirname(workRoot); ; dir = path.dirname(dir)) {
    const mode = (await stat(dir)).mode;
    if ((mode & 0o001) === 0) throw new Error(`ffmpeg runs as uid ${owner.uid} and cannot reach WORK_ROOT through '${dir}' (mode ${(mode & 0o777).toString(8)}); choose a WORK_ROOT below world-searchable directories.`);
    if (dir === path.dirname(dir)) break;
  }
}

/**
 * A fresh directory for one job. Its inputs stay owned by us and world-readable; `out/` is
 * the only directory ffmpeg's user can write to. Nothing in it can be listed by other jobs.
 */
export async function createWorkspace(workRoot: string, taskId: string, owner: Owner): Promise<Workspace> {
  const root = await mkdtemp(path.join(workRoot, `${taskId}@${THIS_PROCESS}-`));
  const workspace = { root, inDir: path.join(root, "in"), outDir: path.join(root, "out") };
  await chmod(root, 0o711);
  await mkdir(workspace.inDir, { mode: 0o711 });
  await mkdir(workspace.outDir, { mode: 0o700 });
  if (owner) await giveTo(workspace.outDir, owner);
  return workspace;
}

/**
 * As root, `out/` is handed to ffmpeg's user. A non-root server (the container's `ffedge`)
 * cannot chown, so `out/` stays ours but writable by all with the sticky bit: ffmpeg can create
 * files there, and we, owning the directory, can still read and remove them.
 */
async function giveTo(dir: string, owner: NonNullable<Owner>): Promise<void> {
  try {
    await chown(dir, owner.uid, owner.gid);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") throw error;
    await chmod(dir, 0o1777);
  }
}

export async function removeWorkspace(workspace: Workspace): Promise<void> {
  await rm(workspace.root, { recursive: true, force: true, maxRetries: 3 });
}

/**
 * Which process made a job directory: its pid and its start time (in clock ticks since boot,
 * from /proc/<pid>/stat), so a reused pid is never mistaken for the owner.
 */
const THIS_PROCESS = `${process.pid}.${startTimeOf(readFileSync("/proc/self/stat", "utf8"))}`;

function startTimeOf(stat: string): string | undefined {
  // The command name (field 2) may hold spaces and parentheses; fields after it are plain.
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
}

async function processAlive(pid: string, startTime: string): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  return stat !== undefined && startTimeOf(stat) === startTime;
}

const OWNED = /^[A-Za-z0-9_-]+@(\d+)\.(\d+)-[A-Za-z0-9]{6}$/;
const UNOWNED = /^[A-Za-z0-9_-]+-[A-Za-z0-9]{6}$/;

/**
 * Removes job directories left behind by a transcoder that was killed outright (SIGKILL, OOM):
 * at once when the process that made one is gone (several transcoders may share WORK_ROOT, so a
 * living owner's are never touched), and directories without an owner (an older layout) once
 * they are older than any job can live. Returns how many were removed.
 */
export async function sweepStaleWorkspaces(workRoot: string, olderThanMs: number): Promise<number> {
  let removed = 0;
  for (const entry of await readdir(workRoot, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = path.join(workRoot, entry.name);
    const owner = OWNED.exec(entry.name);
    if (owner) {
      if (await processAlive(owner[1]!, owner[2]!)) continue;
    } else {
      if (!UNOWNED.test(entry.name)) continue;
      const info = await stat(dir).catch(() => undefined);
      if (!info || Date.now() - info.mtimeMs < olderThanMs) continue;
    }
    await rm(dir, { recursive: true, force: true });
    removed++;
  }
  return removed;
}
