import { type ChildProcess, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useJobInputs } from "./helpers/job-world";
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
      let base = "";
      await waitUntil(() => {
        base = /"msg":"Server listening at (http:\/\/127\.0\.0\.1:\d+)"/.exec(server.output())?.[1] ?? "";
        return base !== "";
      }, 20_000);
      const job = jobFor(inputs.edge, slowCommand(inputs.media.url("/long.mp4")));
      const accepted = await fetch(`${base}/jobs`, { method: "POST", headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" }, body: JSON.stringify(job) });
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
});
