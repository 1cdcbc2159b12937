import { statfsSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { ownerAlive, ownerTag } from "../lib/owner";
import { workspaceFull } from "./failure";

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
  let root: string;
  try {
    root = await mkdtemp(path.join(workRoot, `${taskId}@${ownerTag()}-`));
  } catch (error) {
    throw isNoSpace(error) ? workspaceFull("The job's work directory could not be made") : error;
  }
  const workspace = { root, inDir: path.join(root, "in"), outDir: path.join(root, "out") };
  try {
    await chmod(root, 0o711);
    await mkdir(workspace.inDir, { mode: 0o711 });
    await mkdir(workspace.outDir, { mode: 0o700 });
    if (owner) {
      await giveTo(workspace.outDir, owner);
      await openOnlyTo(workspace.inDir, owner);
    }
  } catch (error) {
    await removeWorkspace(workspace);
    throw isNoSpace(error) ? workspaceFull("The job's work directory could not be made") : error;
  }
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

/**
 * As root, `in/` is opened to the job's group alone (its uid is the job's own when the sandbox
 * gives each job one), so another job's ffmpeg cannot read these inputs even knowing their path.
 * A non-root server cannot chgrp: `in/` stays searchable by all, its names unlistable.
 */
async function openOnlyTo(dir: string, owner: NonNullable<Owner>): Promise<void> {
  try {
    await chown(dir, process.getuid?.() ?? 0, owner.gid);
    await chmod(dir, 0o710);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") throw error;
  }
}

/**
 * Bytes an unprivileged writer can still use in the file system holding `dir`; an unreadable
 * one counts as full. Synchronous (one short statfs) so job admission decides in one step, and
 * two requests cannot both pass the check across an await.
 */
export function freeBytesNow(dir: string): number {
  try {
    const info = statfsSync(dir);
    return info.bavail * info.bsize;
  } catch {
    return 0;
  }
}

/** True for the errors of a full disk or an exhausted quota, wherever in the `cause` chain they are. */
export function isNoSpace(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if (code === "ENOSPC" || code === "EDQUOT") return true;
  }
  return false;
}

export async function removeWorkspace(workspace: Workspace): Promise<void> {
  await rm(workspace.root, { recursive: true, force: true, maxRetries: 3 });
}

// Also the sandbox's own ".root@…" folder (skeleton and fstab) and ".probe@…" scratch folders.
const OWNED = /^\.?[A-Za-z0-9_-]+@(\d+)\.(\d+)-[A-Za-z0-9]{6}$/;
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
      if (await ownerAlive(owner[1]!, owner[2]!)) continue;
    } else {
      if (!UNOWNED.test(entry.name)) continue;
      // Gone since the listing (removed by its own job): nothing to sweep.
      const info = await stat(dir).catch(() => undefined);
      if (!info || Date.now() - info.mtimeMs < olderThanMs) continue;
    }
    await rm(dir, { recursive: true, force: true });
    removed++;
  }
  return removed;
}
