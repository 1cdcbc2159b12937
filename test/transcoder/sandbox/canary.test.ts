import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useJobWorld, useReadableDir } from "../helpers/job-world";
import { serveText } from "../helpers/servers";
import { jobFor, postJob } from "../helpers/transcoder";

/**
 * The canary: a secret in the transcoder's environment and a world-readable secret file on its
 * disk. Inputs that are really playlists or scripts pointing at that file must fail cleanly,
 * and the secret must never appear in any report, upload, error or log line.
 */
const CANARY = `canary-${Math.random().toString(36).slice(2)}-${Date.now()}`;
const secretDir = useReadableDir("ffedge-canary-");
let secretFile: string;

// Registered before the world's hooks: the transcoder starts with the secret in its environment.
beforeAll(async () => {
  process.env.FFEDGE_CANARY = CANARY;
  // A media extension, so that only the service's own format checks stand in the way.
  secretFile = path.join(secretDir.path, "secret.ts");
  await writeFile(secretFile, `${CANARY}\n`, { mode: 0o644 });
});

afterAll(() => {
  delete process.env.FFEDGE_CANARY;
});

const world = useJobWorld({
  routes: () => {
    const hls = `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:10.0,\nfile://${secretFile}\n#EXTINF:10.0,\n${secretFile}\n#EXT-X-ENDLIST\n`;
    const variant = `#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1000\nfile://${secretFile}\n`;
    const concat = `ffconcat version 1.0\nfile 'file:${secretFile}'\nfile '${secretFile}'\n`;
    return {
      "/hls.mp4": serveText(hls),
      "/variant.mp4": serveText(variant),
      "/concat.mp4": serveText(concat),
      "/hls.m3u8": serveText(hls, "application/vnd.apple.mpegurl"),
      "/notes.txt": serveText(`a text file mentioning file://${secretFile}\n`, "text/plain"),
    };
  },
});

function expectNoCanary(taskId: string): void {
  expect(JSON.stringify(world.edge.events(taskId))).not.toContain(CANARY);
  expect(world.transcoder.logs.join("\n")).not.toContain(CANARY);
  for (const [key, body] of world.edge.uploads) if (key.startsWith(`${taskId}/`)) expect(body.toString("latin1")).not.toContain(CANARY);
}

describe("the canary", () => {
  it.each([
    ["an HLS playlist named .mp4", "/hls.mp4"],
    ["an HLS variant playlist named .mp4", "/variant.mp4"],
    ["an ffconcat script named .mp4", "/concat.mp4"],
    ["a text file", "/notes.txt"],
  ])("refuses %s with INPUT_FORMAT_NOT_ALLOWED and leaks nothing", async (_name, route) => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url(route)} -c copy out.mp4`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal).toMatchObject({ type: "failed", error_code: "INPUT_FORMAT_NOT_ALLOWED" });
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
    expectNoCanary(job.task_id);
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it.each([
    ["-f hls", "/hls.mp4"],
    ["-f concat", "/concat.mp4"],
    ["-f tty", "/notes.txt"],
    ["", "/hls.m3u8"],
  ])("refuses %s %s (the policy may already refuse the command) and leaks nothing", async (force, route) => {
    const job = jobFor(world.edge, `ffmpeg ${force} -i ${world.media.url(route)} -c copy out.mp4`);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal.type).toBe("failed");
    if (terminal.type === "failed") expect(["INPUT_FORMAT_NOT_ALLOWED", "COMMAND_REJECTED"]).toContain(terminal.error_code);
    expectNoCanary(job.task_id);
  });

  it("keeps the secret out of a job that runs and fails, and out of one that completes", async () => {
    const failing = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -map 0:s out.mp4`);
    const working = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -t 1 -metadata title=hello out.mkv`, { with_metadata: true });
    await postJob(world.transcoder.app, failing);
    await postJob(world.transcoder.app, working);
    expect(await world.edge.waitForTerminal(failing.task_id)).toMatchObject({ type: "failed", error_code: "FFMPEG_FAILED" });
    expect(await world.edge.waitForTerminal(working.task_id)).toMatchObject({ type: "completed" });
    expectNoCanary(failing.task_id);
    expectNoCanary(working.task_id);
    expect(world.transcoder.logs.some((line) => line.includes("job finished"))).toBe(true);
  });
});
