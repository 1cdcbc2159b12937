import { execFileSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Clips, makeClips } from "../helpers/media";
import { type EdgeStub, type MediaServer, serveFile, startEdgeStub, startMediaServer } from "../helpers/servers";
import { jobFor, postJob, startTranscoder } from "../helpers/transcoder";

let clips: Clips;
let media: MediaServer;
let edge: EdgeStub;

beforeAll(async () => {
  clips = await makeClips();
  media = await startMediaServer({ "/clip.mp4": serveFile(clips.clip, "video/mp4") });
  edge = await startEdgeStub();
});

afterAll(async () => {
  await edge?.close();
  await media?.close();
  await clips?.remove();
});

describe("GET /health", () => {
  it("reports status, load, the sandbox layers in use and ffmpeg's version, without authentication", async () => {
    const transcoder = await startTranscoder({ MAX_CONCURRENT_JOBS: "3", MAX_QUEUED_JOBS: "2" });
    try {
      const response = await transcoder.app.inject({ method: "GET", url: "/health" });
      expect(response.statusCode).toBe(200);
      const version = /ffmpeg version (\S+)/.exec(execFileSync("ffmpeg", ["-version"], { encoding: "utf8" }))?.[1];
      expect(response.json()).toEqual({
        status: "ok",
        running: 0,
        capacity: 5,
        work_root_free_bytes: expect.any(Number),
        isolation: { network_namespace: expect.any(Boolean), unprivileged_uid: expect.any(Boolean), per_job_uid: expect.any(Boolean), job_root: expect.any(Boolean), rlimits: expect.any(Boolean) },
        ffmpeg: version,
      });
    } finally {
      await transcoder.close();
    }
  });

  it("echoes TRANSCODER_INSTANCE, so a supervisor can tell its own transcoder from another program on the port", async () => {
    const transcoder = await startTranscoder({ TRANSCODER_INSTANCE: "3f9c0a" });
    try {
      expect((await transcoder.app.inject({ method: "GET", url: "/health" })).json()).toMatchObject({ status: "ok", instance: "3f9c0a" });
    } finally {
      await transcoder.close();
    }
  });

  it("reports no isolation with SANDBOX=off, and jobs still run", async () => {
    const transcoder = await startTranscoder({ SANDBOX: "off" });
    try {
      const health = (await transcoder.app.inject({ method: "GET", url: "/health" })).json();
      expect(health.isolation).toEqual({ network_namespace: false, unprivileged_uid: false, per_job_uid: false, job_root: false, rlimits: false });
      const job = jobFor(edge, `ffmpeg -i ${media.url("/clip.mp4")} -t 1 out.mp4`);
      await postJob(transcoder.app, job);
      expect(await edge.waitForTerminal(job.task_id)).toMatchObject({ type: "completed" });
      expect(await transcoder.leftovers()).toEqual([]);
    } finally {
      await transcoder.close();
    }
  });
});
