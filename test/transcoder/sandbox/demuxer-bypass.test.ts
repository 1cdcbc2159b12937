import { execFile } from "node:child_process";
import { constants, chmod, mkdtemp, open, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Clips, makeClips } from "../helpers/media";
import { type EdgeStub, type MediaServer, serveFile, serveText, startEdgeStub, startMediaServer } from "../helpers/servers";
import { type TestTranscoder, jobFor, postJob, startTranscoder } from "../helpers/transcoder";

const run = promisify(execFile);

/**
 * Issue 10 #9: an HLS playlist uploaded as `.srt`, read with the user's own `-f srt`, and named
 * again by `subtitles=`, which re-opens the file by itself. The playlist points at a named pipe
 * outside the job folder: if any ffmpeg ever opens it, the pipe gets a reader, which the test
 * sees (opening a FIFO for writing without blocking fails with ENXIO while nobody reads it).
 */
let hostDir: string;
let fifo: string;
let clips: Clips;
let media: MediaServer;
let edge: EdgeStub;
let transcoder: TestTranscoder;

beforeAll(async () => {
  hostDir = await mkdtemp(path.join(os.tmpdir(), "ffedge-bypass-"));
  await chmod(hostDir, 0o755);
  // A segment extension the HLS demuxer accepts.
  fifo = path.join(hostDir, "host-file.ts");
  await run("mkfifo", ["-m", "666", fifo]);
  clips = await makeClips();
  const playlist = `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\nfile://${fifo}\n#EXTINF:10.0,\n${fifo}\n#EXT-X-ENDLIST\n`;
  media = await startMediaServer({
    "/clip.mp4": serveFile(clips.clip, "video/mp4"),
    "/subs.srt": serveText(playlist, "application/x-subrip"),
    "/real.srt": serveText("1\n00:00:00,000 --> 00:00:01,000\nhello\n", "application/x-subrip"),
  });
  edge = await startEdgeStub();
  transcoder = await startTranscoder();
});

afterAll(async () => {
  await transcoder?.close();
  await edge?.close();
  await media?.close();
  await clips?.remove();
  await rm(hostDir, { recursive: true, force: true });
});

/** Watches the FIFO until `stop`; true when something opened it for reading meanwhile. */
function watchForReader(): { stop: () => Promise<boolean> } {
  let opened = false;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const handle = await open(fifo, constants.O_WRONLY | constants.O_NONBLOCK).catch(() => undefined);
      if (handle) {
        opened = true;
        // Closing at once gives the reader an end of file, so nothing hangs on it.
        await handle.close();
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return opened;
    },
  };
}

describe("files ffmpeg opens by itself", () => {
  it.each([
    ["a playlist uploaded as .srt, read with -f srt and named by subtitles=", (subs: string, clip: string) => `ffmpeg -i ${clip} -f srt -i ${subs} -vf subtitles=${subs} -t 1 out.mp4`],
    ["a playlist uploaded as .srt, named by subtitles= only", (subs: string, clip: string) => `ffmpeg -i ${clip} -vf subtitles=${subs} -t 1 out.mp4`],
    ["a playlist uploaded as .srt, named by ass=", (subs: string, clip: string) => `ffmpeg -i ${clip} -f ass -i ${subs} -vf ass=${subs} -t 1 out.mp4`],
  ])("are judged by their bytes: %s is refused and no host file is opened", async (_name, command) => {
    const watcher = watchForReader();
    const job = jobFor(edge, command(media.url("/subs.srt"), media.url("/clip.mp4")));
    await postJob(transcoder.app, job);
    const terminal = await edge.waitForTerminal(job.task_id);
    const opened = await watcher.stop();
    expect(opened).toBe(false);
    expect(terminal.type).toBe("failed");
    if (terminal.type === "failed") expect(["INPUT_FORMAT_NOT_ALLOWED", "COMMAND_REJECTED"]).toContain(terminal.error_code);
    expect(edge.uploadRequests(job.task_id)).toEqual([]);
    expect(await transcoder.leftovers()).toEqual([]);
  });

  it("a real subtitle file named by subtitles= still burns in", async () => {
    const job = jobFor(edge, `ffmpeg -i ${media.url("/clip.mp4")} -f srt -i ${media.url("/real.srt")} -vf subtitles=${media.url("/real.srt")} -t 1 out.mp4`);
    await postJob(transcoder.app, job);
    expect(await edge.waitForTerminal(job.task_id)).toMatchObject({ type: "completed" });
  });
});
