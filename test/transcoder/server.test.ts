import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useJobInputs } from "./helpers/job-world";
import { findProgram } from "../../transcoder/sandbox/isolation";
import { ISOLATION_LAYERS } from "../../transcoder/sandbox/requirements";
import { probeFile } from "./helpers/media";
import { SECRET, findFfmpeg, groupAlive, jobFor, processRunning, slowCommand, waitUntil } from "./helpers/transcoder";

const ROOT = path.resolve(import.meta.dirname, "../..");

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startServer(env: Record<string, string>): Started {
  const child = spawn(process.execPath, ["--import", "tsx", "transcoder/server.ts"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** The address the server logged once it listens. */
async function listeningAt(server: Started): Promise<string> {
  let base = "";
  await waitUntil(() => {
    base = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/.exec(server.output())?.[1] ?? "";
    return base !== "" || server.child.exitCode !== null;
  }, 20_000);
  if (base === "") throw new Error(`the server exited before listening:\n${server.output()}`);
  return base;
}

function postJobTo(base: string, job: unknown): Promise<Response> {
  return fetch(`${base}/jobs`, { method: "POST", headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" }, body: JSON.stringify(job) });
}

describe("transcoder/server.ts", () => {
  it("refuses to start on a bad configuration, naming the problem", async () => {
    const server = startServer({ PORT: "not-a-port" });
    expect(await server.exited).toBe(1);
    expect(server.output()).toContain("TRANSCODER_SECRET");
    expect(server.output()).toContain("PORT");
  });

  describe("with a job running", () => {
    const inputs = useJobInputs();
    let workRoot: string;
    beforeAll(async () => {
      workRoot = await mkdtemp(path.join(os.tmpdir(), "ffedge-server-"));
    });
    afterAll(async () => {
      await rm(workRoot, { recursive: true, force: true });
    });

    async function serverWithSlowJob(): Promise<{ server: Started; base: string; taskId: string; ffmpegPid: number }> {
      const server = startServer({
        TRANSCODER_SECRET: SECRET,
        PORT: "0",
        WORK_ROOT: workRoot,
        DEV_FETCH_ALLOW_HOSTS: "127.0.0.1",
        SHUTDOWN_GRACE_SECONDS: "1",
        LOG_LEVEL: "info",
      });
      const base = await listeningAt(server);
      const job = jobFor(inputs.edge, slowCommand(inputs.media.url("/long.mp4")));
      const accepted = await postJobTo(base, job);
      expect(accepted.status).toBe(202);
      let ffmpegPid: number | undefined;
      await waitUntil(async () => (ffmpegPid = await findFfmpeg(workRoot)) !== undefined);
      return { server, base, taskId: job.task_id, ffmpegPid: ffmpegPid! };
    }

    it("takes ffmpeg down with it when it is killed outright; restarted, it sweeps the job folder at once and takes the same task again", async () => {
      const { server, ffmpegPid, taskId } = await serverWithSlowJob();
      server.child.kill("SIGKILL");
      await server.exited;
      await waitUntil(async () => !(await processRunning(ffmpegPid)), 2_000);
      // Job folders only: each server also keeps its job-root skeleton there (".root@…").
      const jobFolders = async () => (await readdir(workRoot)).filter((entry) => !entry.startsWith("."));
      expect(await jobFolders()).toHaveLength(1);

      const restarted = await serverWithSlowJob();
      expect(await jobFolders()).toHaveLength(1);
      expect((await readdir(workRoot)).filter((entry) => entry.startsWith(".root@"))).toHaveLength(1);
      const again = await fetch(`${restarted.base}/jobs`, { method: "POST", headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" }, body: JSON.stringify(jobFor(inputs.edge, slowCommand(inputs.media.url("/long.mp4")), { task_id: taskId })) });
      expect(again.status).toBe(202);
      restarted.server.child.kill("SIGKILL");
      await restarted.server.exited;
      await rm(workRoot, { recursive: true, force: true });
      await mkdir(workRoot);
    });

    it("on SIGTERM stops taking jobs, stops the running one, hands it back to the edge and exits 0", async () => {
      const { server, base, taskId, ffmpegPid } = await serverWithSlowJob();
      expect((await fetch(`${base}/health`)).status).toBe(200);

      server.child.kill("SIGTERM");
      await new Promise((resolve) => setTimeout(resolve, 200));
      const refused = await fetch(`${base}/jobs`, { method: "POST", headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" }, body: JSON.stringify(jobFor(inputs.edge, "ffmpeg -i https://example.com/a.mp4 out.mp4")) });
      expect(refused.status).toBe(503);
      expect(await server.exited).toBe(0);
      expect(groupAlive(ffmpegPid)).toBe(false);
      expect(inputs.edge.events(taskId).at(-1)).toMatchObject({ type: "handed_back", reason: expect.stringContaining("shut down") });
      expect(await readdir(workRoot)).toEqual([]);
    });
  });
  describe("draining on SIGTERM", () => {
    const inputs = useJobInputs();
    let workRoot: string;
    beforeAll(async () => {
      workRoot = await mkdtemp(path.join(os.tmpdir(), "ffedge-drain-"));
    });
    afterAll(async () => {
      await rm(workRoot, { recursive: true, force: true });
    });

    it("lets a running job finish and report its real result, answers new jobs 503 meanwhile, and exits once it has reported", async () => {
      const graceSeconds = 120;
      const server = startServer({
        TRANSCODER_SECRET: SECRET,
        PORT: "0",
        WORK_ROOT: workRoot,
        DEV_FETCH_ALLOW_HOSTS: "127.0.0.1",
        SHUTDOWN_GRACE_SECONDS: String(graceSeconds),
        LOG_LEVEL: "info",
      });
      const base = await listeningAt(server);
      // Two seconds upscaled to 720p at x264's slowest preset on one thread: seconds of work, still running at SIGTERM.
      const job = jobFor(inputs.edge, `ffmpeg -i ${inputs.media.url("/clip.mp4")} -t 2 -vf scale=1280:720 -c:v libx264 -preset veryslow -threads 1 drained.mp4`);
      expect((await postJobTo(base, job)).status).toBe(202);
      let ffmpegPid: number | undefined;
      await waitUntil(async () => (ffmpegPid = await findFfmpeg(workRoot)) !== undefined);

      const terminatedAt = Date.now();
      server.child.kill("SIGTERM");
      await waitUntil(() => server.output().includes('"msg":"shutting down"'));
      const refused = await postJobTo(base, jobFor(inputs.edge, `ffmpeg -i ${inputs.media.url("/clip.mp4")} late.mp4`));
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).not.toBeNull();
      expect(await refused.json()).toMatchObject({ code: "TRANSCODER_BUSY" });
      const health = await fetch(`${base}/health`);
      expect(health.status).toBe(503);
      expect(await health.json()).toMatchObject({ status: "draining", running: 1 });
      expect(await processRunning(ffmpegPid!)).toBe(true);

      expect(await server.exited).toBe(0);
      const exitedAfterMs = Date.now() - terminatedAt;
      const events = inputs.edge.events(job.task_id);
      expect(events.map((event) => event.type)).not.toContain("handed_back");
      expect(events.at(-1)).toMatchObject({ type: "completed", outputs: [{ filename: "drained.mp4" }] });
      const uploaded = inputs.edge.uploads.get(`${job.task_id}/drained.mp4`);
      expect(uploaded).toBeDefined();
      const copy = path.join(workRoot, "..", `${path.basename(workRoot)}-drained.mp4`);
      await writeFile(copy, uploaded!);
      try {
        const probed = await probeFile(copy);
        expect(probed.streams.find((stream) => stream.codec_type === "video")?.width).toBe(1280);
        expect(Number(probed.format.duration)).toBeCloseTo(2, 0);
      } finally {
        await rm(copy, { force: true });
      }
      // It left as soon as its last job had reported, not at the end of the grace.
      expect(exitedAfterMs).toBeLessThan((graceSeconds / 2) * 1000);
      expect(await readdir(workRoot)).toEqual([]);
    }, 90_000);
  });

  describe("under EGRESS=container, without a required isolation layer", () => {
    let workRoot: string;
    let bin: string;
    let ca: string;
    beforeAll(async () => {
      workRoot = await mkdtemp(path.join(os.tmpdir(), "ffedge-fail-closed-"));
      // A host without unshare (as a runtime whose seccomp forbids it): ffmpeg, ffprobe, prlimit and setpriv only.
      bin = await mkdtemp(path.join(os.tmpdir(), "ffedge-no-unshare-"));
      for (const program of ["ffmpeg", "ffprobe", "prlimit", "setpriv"]) {
        const found = await findProgram(program);
        if (found) await symlink(found, path.join(bin, program));
      }
      ca = "/etc/ssl/certs/ca-certificates.crt";
      if (!existsSync(ca)) {
        ca = path.join(bin, "ca.crt");
        await writeFile(ca, "");
      }
    });
    afterAll(async () => {
      await rm(workRoot, { recursive: true, force: true });
      await rm(bin, { recursive: true, force: true });
    });

    const containerServer = (env: Record<string, string>) =>
      startServer({ TRANSCODER_SECRET: SECRET, PORT: "0", WORK_ROOT: workRoot, EGRESS: "container", NODE_EXTRA_CA_CERTS: ca, LOG_LEVEL: "info", ...env });

    /** The one line a refused start writes, with the names of the layers it says are missing. */
    async function refusal(server: Started): Promise<{ line: string; missing: string[] }> {
      expect(await server.exited).toBe(1);
      const lines = server.output().split("\n").filter((line) => line.includes("could not start"));
      expect(lines).toHaveLength(1);
      const line = lines[0]!;
      expect(line).toMatch(/^The transcoder could not start: EGRESS=container requires every isolation layer/);
      return { line, missing: ISOLATION_LAYERS.filter((layer) => line.includes(`${layer} (`)) };
    }

    it("refuses to start with the sandbox off, naming every required layer and the override", async () => {
      const { line, missing } = await refusal(containerServer({ SANDBOX: "off" }));
      expect(missing).toEqual(["network_namespace", "unprivileged_uid", "job_root"]);
      expect(line).toContain("SANDBOX_ALLOW_MISSING=network_namespace,unprivileged_uid,job_root");
    });

    describe.skipIf(process.getuid?.() !== 0)("as root, where every other layer works", () => {
      it("refuses to start where unshare is missing, naming exactly the layers that need it", async () => {
        const { missing } = await refusal(containerServer({ PATH: bin }));
        expect(missing).toEqual(["network_namespace", "job_root"]);
      });

      it("still refuses when the override names only some of the missing layers", async () => {
        const { missing } = await refusal(containerServer({ PATH: bin, SANDBOX_ALLOW_MISSING: "network_namespace" }));
        expect(missing).toEqual(["job_root"]);
      });

      it("starts when the override names exactly the missing layers, warns, and reports them on /health", async () => {
        const server = containerServer({ PATH: bin, SANDBOX_ALLOW_MISSING: "network_namespace,job_root" });
        try {
          const base = await listeningAt(server);
          expect(server.output()).toContain("starting without required isolation layers, as SANDBOX_ALLOW_MISSING allows");
          const health = await fetch(`${base}/health`);
          expect(health.status).toBe(200);
          expect(await health.json()).toMatchObject({ isolation: { network_namespace: false, job_root: false, unprivileged_uid: true, rlimits: true } });
        } finally {
          server.child.kill("SIGTERM");
          expect(await server.exited).toBe(0);
        }
      });
    });
  });
});
