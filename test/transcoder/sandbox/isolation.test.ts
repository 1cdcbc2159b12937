import { readFile, readlink } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Clips, makeClips } from "../helpers/media";
import { type EdgeStub, type MediaServer, serveFile, startEdgeStub, startMediaServer } from "../helpers/servers";
import { type TestTranscoder, jobFor, postJob, slowCommand, startTranscoder, waitUntil } from "../helpers/transcoder";

let clips: Clips;
let media: MediaServer;
let edge: EdgeStub;
let transcoder: TestTranscoder;

beforeAll(async () => {
  process.env.FFEDGE_ISOLATION_CANARY = "must-not-reach-ffmpeg";
  clips = await makeClips();
  media = await startMediaServer({ "/long.mp4": serveFile(clips.long, "video/mp4") });
  edge = await startEdgeStub();
  transcoder = await startTranscoder();
});

afterAll(async () => {
  delete process.env.FFEDGE_ISOLATION_CANARY;
  await transcoder?.close();
  await edge?.close();
  await media?.close();
  await clips?.remove();
});

describe("a running ffmpeg", () => {
  it("has an empty environment and exactly the isolation /health reports", async () => {
    const job = jobFor(edge, slowCommand(media.url("/long.mp4")));
    await postJob(transcoder.app, job);
    let pid: number | undefined;
    await waitUntil(() => (pid = transcoder.app.jobs.get(job.task_id)?.ffmpegPid) !== undefined);
    // The pid is spawned as unshare, which execs prlimit, setpriv and finally ffmpeg.
    await waitUntil(async () => /(^|\/)ffmpeg$/.test((await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0")[0]!));
    const health = (await transcoder.app.inject({ method: "GET", url: "/health" })).json();

    const environ = await readFile(`/proc/${pid}/environ`, "utf8");
    expect(environ).toBe("");
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
    expect(cmdline[0]).toMatch(/ffmpeg$/);
    expect(cmdline).toContain("-protocol_whitelist");

    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const uid = Number(/^Uid:\s+(\d+)/m.exec(status)?.[1]);
    if (health.isolation.unprivileged_uid) {
      expect(uid).toBe(65534);
      expect(/^Groups:[ \t]*(.*)$/m.exec(status)?.[1]?.trim()).toBe("");
    } else {
      expect(uid).toBe(process.getuid?.());
    }

    const theirs = await readlink(`/proc/${pid}/ns/net`);
    const ours = await readlink("/proc/self/ns/net");
    if (health.isolation.network_namespace) expect(theirs).not.toBe(ours);
    else expect(theirs).toBe(ours);

    const limits = await readFile(`/proc/${pid}/limits`, "utf8");
    if (health.isolation.rlimits) {
      expect(limits).toMatch(new RegExp(`Max file size\\s+${transcoder.config.maxOutputBytes}\\s`));
      expect(limits).toMatch(new RegExp(`Max address space\\s+${transcoder.config.maxMemoryBytes}\\s`));
      expect(limits).toMatch(/Max core file size\s+0\s/);
    }

    await transcoder.app.inject({ method: "DELETE", url: `/jobs/${job.task_id}`, headers: { authorization: `Bearer ${transcoder.config.transcoderSecret}` } });
    expect(await edge.waitForTerminal(job.task_id)).toMatchObject({ type: "failed", error_code: "CANCELED" });
  });

  it("uses every layer on a root host with util-linux (this CI machine)", async () => {
    if (process.getuid?.() !== 0) return;
    const health = (await transcoder.app.inject({ method: "GET", url: "/health" })).json();
    expect(health.isolation).toEqual({ network_namespace: true, unprivileged_uid: true, rlimits: true });
  });
});
