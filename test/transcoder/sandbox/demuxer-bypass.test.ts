import { execFile } from "node:child_process";
import { constants, open } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import { useJobWorld, useReadableDir } from "../helpers/job-world";
import { serveText } from "../helpers/servers";
import { jobFor, postJob } from "../helpers/transcoder";

const run = promisify(execFile);

/**
 * Issue 10 #9: an HLS playlist uploaded as `.srt`, read with the user's own `-f srt`, and named
 * again by `subtitles=`, which re-opens the file by itself. The playlist points at a named pipe
 * outside the job folder: if any ffmpeg ever opens it, the pipe gets a reader, which the test
 * sees (opening a FIFO for writing without blocking fails with ENXIO while nobody reads it).
 */
const hostDir = useReadableDir("ffedge-bypass-");
let fifo: string;

// Registered before the world's hooks, so the pipe exists when its media server starts.
beforeAll(async () => {
  // A segment extension the HLS demuxer accepts.
  fifo = path.join(hostDir.path, "host-file.ts");
  await run("mkfifo", ["-m", "666", fifo]);
});

const world = useJobWorld({
  routes: () => ({
    "/subs.srt": serveText(`#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.0,\nfile://${fifo}\n#EXTINF:10.0,\n${fifo}\n#EXT-X-ENDLIST\n`, "application/x-subrip"),
    "/real.srt": serveText("1\n00:00:00,000 --> 00:00:01,000\nhello\n", "application/x-subrip"),
  }),
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
    const job = jobFor(world.edge, command(world.media.url("/subs.srt"), world.media.url("/clip.mp4")));
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    const opened = await watcher.stop();
    expect(opened).toBe(false);
    expect(terminal.type).toBe("failed");
    if (terminal.type === "failed") expect(["INPUT_FORMAT_NOT_ALLOWED", "COMMAND_REJECTED"]).toContain(terminal.error_code);
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("a real subtitle file named by subtitles= still burns in", async () => {
    const job = jobFor(world.edge, `ffmpeg -i ${world.media.url("/clip.mp4")} -f srt -i ${world.media.url("/real.srt")} -vf subtitles=${world.media.url("/real.srt")} -t 1 out.mp4`);
    await postJob(world.transcoder.app, job);
    expect(await world.edge.waitForTerminal(job.task_id)).toMatchObject({ type: "completed" });
  });
});
