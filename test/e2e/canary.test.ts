import { randomBytes } from "node:crypto";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { type TaskBody, submitTask, waitForEnd } from "./helpers";
import { Stack, authed, uploadLocalFile } from "../../scripts/lib/local-stack";

/**
 * The catalogue's canary: a secret in the transcoder's environment and in a world-readable
 * file beside it. Every attack that can reach ffmpeg runs; the secret must never come back.
 */
const SECRET = `CANARY-${randomBytes(12).toString("hex")}`;
let stack: Stack;
let key: string;
let canaryDir: string;
let secretFile: string;
const seen: string[] = [];

beforeAll(async () => {
  canaryDir = await mkdtemp(join(tmpdir(), "ffedge-canary-"));
  secretFile = join(canaryDir, "secret.txt");
  await writeFile(secretFile, `${SECRET}\n`);
  await chmod(canaryDir, 0o755);
  await chmod(secretFile, 0o644);
  stack = await Stack.start({ transcoderEnv: { FFEDGE_CANARY: SECRET } });
  ({ key } = await stack.createUser());
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await rm(canaryDir, { recursive: true, force: true });
});

async function uploadText(name: string, text: string, type = "video/mp4"): Promise<string> {
  const path = join(await mediaDir(), name);
  await writeFile(path, text);
  return (await uploadLocalFile(stack, key, path, type)).url;
}

/** Runs a command to its end (or refusal) and keeps everything it gave back. */
async function attempt(command: string): Promise<TaskBody | { refused: string }> {
  const response = await submitTask(stack, key, { command });
  const body = await response.text();
  seen.push(body);
  if (response.status !== 201) return { refused: JSON.parse(body).code as string };
  const { task_id } = JSON.parse(body) as { task_id: string };
  const { task } = await waitForEnd(stack, key, task_id);
  seen.push(JSON.stringify(task));
  const log = await stack.fetch(`/v1/tasks/${task_id}/logs`, authed(key));
  seen.push(await log.text());
  for (const output of task.outputs ?? []) seen.push(Buffer.from(await (await fetch(output.url)).arrayBuffer()).toString("latin1"));
  return task;
}

describe("the canary", () => {
  it("never leaks through a concat script, a playlist, a local path or a filter", async () => {
    const concat = await uploadText("concat.mp4", `ffconcat version 1.0\nfile '${secretFile}'\nfile 'file:${secretFile}'\n`);
    const playlist = await uploadText("playlist.mp4", `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:1.0,\nfile://${secretFile}\n#EXT-X-ENDLIST\n`);
    const subtitlesPlaylist = await uploadText("subs.srt", `#EXTM3U\n#EXTINF:1.0,\n${secretFile}\n`, "application/x-subrip");
    const video = (await uploadLocalFile(stack, key, await makeClip(await mediaDir(), "v.mp4", { seconds: 1 }))).url;

    const outcomes = [
      await attempt(`ffmpeg -i ${concat} -c copy out.mp4`),
      await attempt(`ffmpeg -i ${playlist} -c copy out.mp4`),
      await attempt(`ffmpeg -f hls -i ${playlist} out.mp4`),
      await attempt(`ffmpeg -f concat -safe 0 -i ${concat} out.mp4`),
      await attempt(`ffmpeg -i ${video} -i ${subtitlesPlaylist} -map 0 -map 1 -c:v copy -c:a copy -c:s mov_text out.mp4`),
      await attempt(`ffmpeg -i ${video} -vf subtitles=${subtitlesPlaylist} burned.mp4`),
      await attempt(`ffmpeg -i ${secretFile} out.mp4`),
      await attempt(`ffmpeg -i file://${secretFile} out.mp4`),
      await attempt(`ffmpeg -i ${video} -vf drawtext=textfile=${secretFile} out.mp4`),
      await attempt(`ffmpeg -i ${video} -metadata comment=$FFEDGE_CANARY out.mp4`),
      await attempt(`ffmpeg -i ${video} -attach ${secretFile} out.mkv`),
    ];

    for (const outcome of outcomes) expect("refused" in outcome || outcome.status === "failed" || outcome.status === "completed").toBe(true);
    expect(outcomes.filter((outcome) => "refused" in outcome).length).toBeGreaterThanOrEqual(5);
    expect(outcomes.slice(0, 2)).toMatchObject([{ error_code: "INPUT_FORMAT_NOT_ALLOWED" }, { error_code: "INPUT_FORMAT_NOT_ALLOWED" }]);

    const everything = [...seen, ...stack.transcoders.flatMap((transcoder) => transcoder.logs)].join("\n");
    expect(everything.length).toBeGreaterThan(1000);
    expect(everything).not.toContain(SECRET);
  }, 180_000);
});
