import { mkdir, mkdtemp, readdir, rm, stat, utimes } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createWorkspace, inputPath, removeWorkspace, sweepStaleWorkspaces } from "../../../transcoder/jobs/workspace";

let root: string;
beforeEach(async () => void (root = await mkdtemp(path.join(os.tmpdir(), "ffedge-ws-"))));
afterEach(async () => rm(root, { recursive: true, force: true }));

describe("createWorkspace", () => {
  it("makes in/ and out/ under a fresh directory named after the task, out/ owned by ffmpeg's user, in/ open to its group alone", async () => {
    const owner = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined;
    const workspace = await createWorkspace(root, "task_1", owner);
    expect(path.basename(workspace.root)).toMatch(new RegExp(`^task_1@${process.pid}\\.\\d+-[A-Za-z0-9]{6}$`));
    expect(inputPath(workspace, 2)).toBe(path.join(workspace.inDir, "input-2"));
    const out = await stat(workspace.outDir);
    expect(out.mode & 0o777).toBe(0o700);
    if (owner) expect(out.uid).toBe(65534);
    // Root opens in/ to the job's group only; otherwise it stays searchable, never listable.
    expect((await stat(workspace.inDir)).mode & 0o777).toBe(owner ? 0o710 : 0o711);
    if (owner) expect((await stat(workspace.inDir)).gid).toBe(65534);
    await removeWorkspace(workspace);
    expect(await readdir(root)).toEqual([]);
  });
});

describe("sweepStaleWorkspaces", () => {
  it("removes at once the directories of a transcoder that is gone, never a living one's", async () => {
    const ours = await createWorkspace(root, "running_task", undefined);
    // pid 2^22 + 1 is above Linux's pid_max: that transcoder cannot be alive.
    const dead = path.join(root, "killed_task@4194305.12345-abcDEF");
    await mkdir(path.join(dead, "out"), { recursive: true });
    expect(await sweepStaleWorkspaces(root, 30 * 60_000)).toBe(1);
    expect(await readdir(root)).toEqual([path.basename(ours.root)]);
  });

  it("removes directories without an owner only when older than the limit", async () => {
    const stale = path.join(root, "old_task-abcdef");
    const fresh = path.join(root, "new_task-ghijkl");
    await Promise.all([mkdir(stale), mkdir(fresh), mkdir(path.join(root, "not-ours"))]);
    const hourAgo = new Date(Date.now() - 60 * 60_000);
    await utimes(stale, hourAgo, hourAgo);
    await utimes(path.join(root, "not-ours"), hourAgo, hourAgo);
    expect(await sweepStaleWorkspaces(root, 30 * 60_000)).toBe(1);
    expect((await readdir(root)).sort()).toEqual(["new_task-ghijkl", "not-ours"]);
  });
});
