import { execFile } from "node:child_process";
import { chmod, mkdtemp, readFile, readlink, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useJobWorld } from "../helpers/job-world";
import { JOB_UID_BASE, detectSandbox } from "../../../transcoder/sandbox/isolation";
import { runIsolated } from "../../../transcoder/sandbox/process";
import { jobFor, postJob, slowCommand, waitUntil } from "../helpers/transcoder";

// Registered before the world's hooks, so the transcoder starts with the variable set.
beforeAll(() => {
  process.env.FFEDGE_ISOLATION_CANARY = "must-not-reach-ffmpeg";
});

afterAll(() => {
  delete process.env.FFEDGE_ISOLATION_CANARY;
});

const world = useJobWorld();

describe("a running ffmpeg", () => {
  it("has an empty environment and exactly the isolation /health reports", async () => {
    const job = jobFor(world.edge, slowCommand(world.media.url("/long.mp4")));
    await postJob(world.transcoder.app, job);
    let pid: number | undefined;
    await waitUntil(() => (pid = world.transcoder.app.jobs.get(job.task_id)?.ffmpegPid) !== undefined);
    // The pid is spawned as unshare, which execs prlimit, setpriv and finally ffmpeg.
    await waitUntil(async () => /(^|\/)ffmpeg$/.test((await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0")[0]!));
    const health = (await world.transcoder.app.inject({ method: "GET", url: "/health" })).json();

    const environ = await readFile(`/proc/${pid}/environ`, "utf8");
    expect(environ).toBe("");
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
    expect(cmdline[0]).toMatch(/ffmpeg$/);
    expect(cmdline).toContain("-protocol_whitelist");

    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    if (health.isolation.per_job_uid) {
      expect(uid).toBeGreaterThanOrEqual(JOB_UID_BASE);
      expect(/^Groups:[ \t]*(.*)$/m.exec(status)?.[1]?.trim()).toBe("");
    } else if (health.isolation.unprivileged_uid) {
      expect(uid).toBe(65534);
      expect(/^Groups:[ \t]*(.*)$/m.exec(status)?.[1]?.trim()).toBe("");
    } else {
      expect(uid).toBe(process.getuid?.());
    }

    // In its job root, ffmpeg's "/" is the skeleton, its folder is /job, and nothing else of the host is there.
    const root = await readlink(`/proc/${pid}/root`);
    if (health.isolation.job_root) {
      expect(root).toMatch(/\/\.root@\d+\.\d+-[A-Za-z0-9]{6}\/root$/);
      expect(cmdline.some((arg) => arg.startsWith("/job/in/input-0"))).toBe(true);
      // mountinfo shows mount points relative to the process's root, and only those inside it.
      const mounts = (await readFile(`/proc/${pid}/mountinfo`, "utf8")).split("\n").filter(Boolean).map((line) => line.split(" ")[4]!);
      expect(mounts).toContain("/job");
      expect(mounts).toContain("/usr");
      for (const point of mounts) expect(point).toMatch(/^\/(job|usr|bin|sbin|lib\w*|etc\/(ld\.so\.cache|alternatives|fonts)|var\/cache\/fontconfig|dev\/(null|urandom))$/);
    } else {
      expect(root).toBe("/");
    }

    const theirs = await readlink(`/proc/${pid}/ns/net`);
    const ours = await readlink("/proc/self/ns/net");
    if (health.isolation.network_namespace) expect(theirs).not.toBe(ours);
    else expect(theirs).toBe(ours);

    const limits = await readFile(`/proc/${pid}/limits`, "utf8");
    if (health.isolation.rlimits) {
      expect(limits).toMatch(new RegExp(`Max file size\\s+${world.transcoder.config.maxOutputBytes}\\s`));
      expect(limits).toMatch(new RegExp(`Max address space\\s+${world.transcoder.config.maxMemoryBytes}\\s`));
      expect(limits).toMatch(/Max core file size\s+0\s/);
    }

    await world.transcoder.app.inject({ method: "DELETE", url: `/jobs/${job.task_id}`, headers: { authorization: `Bearer ${world.transcoder.config.transcoderSecret}` } });
    expect(await world.edge.waitForTerminal(job.task_id)).toMatchObject({ type: "failed", error_code: "CANCELED" });
  });

  it("uses every layer on a root host with util-linux (this CI machine)", async () => {
    if (process.getuid?.() !== 0) return;
    const health = (await world.transcoder.app.inject({ method: "GET", url: "/health" })).json();
    expect(health.isolation).toEqual({ network_namespace: true, unprivileged_uid: true, per_job_uid: true, job_root: true, rlimits: true });
  });
});

describe("the job root", () => {
  it("shows a sandboxed program its own job folder and no other file of the host", async () => {
    const workRoot = await mkdtemp(path.join(os.tmpdir(), "ffedge-jobroot-"));
    const sandbox = await detectSandbox("auto", "ffmpeg", workRoot);
    try {
      if (!sandbox.report.job_root) return;
      const hostSecret = path.join(workRoot, "..", `ffedge-host-secret-${process.pid}`);
      await writeFile(hostSecret, "host secret\n", { mode: 0o644 });
      const dir = await mkdtemp(path.join(workRoot, "job-"));
      await chmod(dir, 0o755);
      await writeFile(path.join(dir, "mine.txt"), "job file\n", { mode: 0o644 });
      const job = { dir, cwd: "/job", user: sandbox.acquireUser() };
      const limits = { cpuSeconds: 10, memoryBytes: 1024 ** 3, fileBytes: 1024 ** 2, processes: 64, openFiles: 64 };
      const cat = async (file: string) => (await runIsolated(sandbox.wrap("/bin/cat", [file], limits, job), { cwd: sandbox.spawnCwd(job), timeoutMs: 10_000 }).result);
      const own = await cat("mine.txt");
      expect(own.stdout.toString()).toBe("job file\n");
      for (const file of [hostSecret, "/etc/passwd", `/proc/${process.pid}/environ`, path.join(workRoot, "..")]) {
        const other = await cat(file);
        expect(other.code, file).not.toBe(0);
        expect(other.stderr).toContain("No such file or directory");
      }
      await rm(hostSecret, { force: true });
    } finally {
      await sandbox.dispose();
      await rm(workRoot, { recursive: true, force: true });
    }
  });
  it("mounts every system path with one mount run, also when the work root's path has spaces and backslashes", async () => {
    const workRoot = await mkdtemp(path.join(os.tmpdir(), "ffedge jobroot \\ tab\t-"));
    const sandbox = await detectSandbox("auto", "ffmpeg", workRoot);
    try {
      // Root on a host with util-linux (this CI machine) always gets the job root.
      if (process.getuid?.() !== 0) return;
      expect(sandbox.report.job_root).toBe(true);
      const dir = await mkdtemp(path.join(workRoot, "job "));
      await chmod(dir, 0o755);
      await writeFile(path.join(dir, "mine.txt"), "job file\n", { mode: 0o644 });
      const job = { dir, cwd: "/job", user: sandbox.acquireUser() };
      const limits = { cpuSeconds: 10, memoryBytes: 1024 ** 3, fileBytes: 1024 ** 2, processes: 64, openFiles: 64 };
      const run = (program: string, args: string[]) => runIsolated(sandbox.wrap(program, args, limits, job), { cwd: sandbox.spawnCwd(job), timeoutMs: 10_000 }).result;
      expect((await run("/bin/cat", ["mine.txt"])).stdout.toString()).toBe("job file\n");
      // The system files are there read-only, and /dev/null still takes writes.
      const touched = await run("/bin/sh", ["-c", "echo x > /dev/null && touch /usr/ffedge-probe"]);
      expect(touched.code).not.toBe(0);
      expect(touched.stderr).toContain("Read-only file system");
    } finally {
      await sandbox.dispose();
      await rm(workRoot, { recursive: true, force: true });
    }
  });
});

describe("the job root of a non-root server", () => {
  it("is built in a user namespace, shows no host file, and leaves ffmpeg's side no capability", async () => {
    if (process.getuid?.() !== 0) return;
    const workRoot = await mkdtemp(path.join(os.tmpdir(), "ffedge-nonroot-"));
    await chmod(workRoot, 0o777);
    const hostFile = path.join(workRoot, "host-file.txt");
    await writeFile(hostFile, "host file\n", { mode: 0o644 });
    try {
      const root = path.resolve(import.meta.dirname, "../../..");
      const { stdout } = await promisify(execFile)(
        "setpriv",
        ["--reuid=1000", "--regid=1000", "--clear-groups", "--", process.execPath, "--import", "tsx", path.join(import.meta.dirname, "fixtures/job-root-probe.ts"), workRoot, hostFile],
        { cwd: root, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: workRoot } },
      );
      const outcome = JSON.parse(stdout.trim().split("\n").at(-1)!);
      expect(outcome.uid).toBe(1000);
      // This host allows user namespaces; /health must say what the server really got.
      expect(outcome.report).toMatchObject({ network_namespace: true, per_job_uid: false, job_root: true });
      expect(outcome.own).toMatchObject({ code: 0, stdout: "job file\n" });
      expect(outcome.host.code).not.toBe(0);
      expect(outcome.host.stderr).toContain("No such file or directory");
      expect(outcome.capabilities.stdout).toMatch(/Capability bounding set: \[none\]/);
      expect(outcome.capabilities.stdout).toMatch(/no_new_privs: 1/);
    } finally {
      await rm(workRoot, { recursive: true, force: true });
    }
  });
});
