import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir, probe } from "../../scripts/lib/media";
import { Stack, uploadLocalFile } from "../../scripts/lib/local-stack";
import { submitTask, waitForEnd } from "./helpers";

// Every output container the policy accepts, run through ffmpeg on the real stack: each output
// is produced, stored, served by the CDN with its extension's Content-Type, and ffprobe reads it.
let stack: Stack;
let dir: string;
let user: { key: string; userId: string };
let clipUrl: string;

beforeAll(async () => {
  stack = await Stack.start();
  dir = await mediaDir();
  user = await stack.createUser();
  clipUrl = (await uploadLocalFile(stack, user.key, await makeClip(dir, "clip.mp4", { seconds: 2 }))).url;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** The text of each DASH manifest `run` downloaded, by file name. */
const manifests = new Map<string, string>();

/** Runs `outputs` from the clip and answers each output's CDN Content-Type and ffprobe format, by file name. */
async function run(outputs: string): Promise<Map<string, { type: string | null; format: string }>> {
  const response = await submitTask(stack, user.key, { command: `ffmpeg -i ${clipUrl} ${outputs}` });
  expect(response.status, await response.clone().text()).toBe(201);
  const { task_id } = (await response.json()) as { task_id: string };
  const { task } = await waitForEnd(stack, user.key, task_id, 120_000);
  expect(task.status, task.error).toBe("completed");
  const served = new Map<string, { type: string | null; format: string }>();
  for (const output of task.outputs!) {
    const download = await fetch(output.url);
    expect(download.status, output.filename).toBe(200);
    const bytes = new Uint8Array(await download.arrayBuffer());
    expect(bytes.byteLength, output.filename).toBe(output.size);
    const path = join(dir, `${task_id}-${output.filename}`);
    await writeFile(path, bytes);
    const format = /\.(m3u8|mpd|m4s)$/.test(output.filename) ? "" : (await probe(path)).format.format_name;
    if (output.filename.endsWith(".mpd")) manifests.set(output.filename, new TextDecoder().decode(bytes));
    served.set(output.filename, { type: download.headers.get("content-type"), format: String(format) });
  }
  return served;
}

describe("output containers on the real stack", () => {
  it("writes and serves avi, flv, mkv, mov, webm, ts, gif, webp and png/jpg sequences", async () => {
    const served = await run(
      "-t 1 out.avi -t 1 out.flv -t 1 out.mkv -t 1 out.mov -t 1 -deadline realtime -cpu-used 8 out.webm -t 1 out.ts -t 1 out.gif -t 1 out.webp " +
        "-frames:v 3 still_%03d.png -frames:v 2 still_%03d.jpg",
    );
    const expected: [string, string, RegExp][] = [
      ["out.avi", "video/x-msvideo", /avi/], ["out.flv", "video/x-flv", /flv/], ["out.mkv", "video/x-matroska", /matroska/],
      ["out.mov", "video/quicktime", /mov/], ["out.webm", "video/webm", /webm/], ["out.ts", "video/mp2t", /mpegts/],
      ["out.gif", "image/gif", /gif/], ["out.webp", "image/webp", /webp/], ["still_001.png", "image/png", /png/],
      ["still_002.png", "image/png", /png/], ["still_003.png", "image/png", /png/], ["still_001.jpg", "image/jpeg", /jpeg|image2/], ["still_002.jpg", "image/jpeg", /jpeg|image2/],
    ];
    for (const [name, type, format] of expected) {
      expect(served.get(name)?.type, name).toBe(type);
      expect(served.get(name)?.format, name).toMatch(format);
    }
    expect(served.size).toBe(expected.length);
  });

  it("writes and serves ogg, oga, opus, wav, flac, m4a, aac and mp3", async () => {
    const served = await run("-vn -t 1 out.ogg -vn -t 1 out.oga -vn -t 1 out.opus -t 1 out.wav -t 1 out.flac -vn -t 1 out.m4a -t 1 out.aac -t 1 out.mp3");
    const expected: [string, string, RegExp][] = [
      ["out.ogg", "audio/ogg", /ogg/], ["out.oga", "audio/ogg", /ogg/], ["out.opus", "audio/opus", /ogg/], ["out.wav", "audio/wav", /wav/],
      ["out.flac", "audio/flac", /flac/], ["out.m4a", "audio/mp4", /mp4|m4a/], ["out.aac", "audio/aac", /aac/], ["out.mp3", "audio/mpeg", /mp3/],
    ];
    for (const [name, type, format] of expected) {
      expect(served.get(name)?.type, name).toBe(type);
      expect(served.get(name)?.format, name).toMatch(format);
    }
  });

  it("writes an HLS playlist and its segments", async () => {
    const served = await run("-c:v libx264 -g 25 -hls_time 1 -hls_playlist_type vod index.m3u8");
    expect(served.get("index.m3u8")?.type).toBe("application/vnd.apple.mpegurl");
    const segments = [...served.keys()].filter((name) => name !== "index.m3u8");
    expect(segments.length).toBeGreaterThanOrEqual(1);
    for (const name of segments) expect([name, served.get(name)?.type]).toEqual([expect.stringMatching(/^index\d+\.ts$/), "video/mp2t"]);
  });

  it("writes a DASH manifest and every segment it names, all published", async () => {
    const served = await run("-c:v libx264 -g 25 -c:a aac -seg_duration 1 manifest.mpd");
    expect(served.get("manifest.mpd")?.type).toBe("application/dash+xml");
    const names = [...served.keys()];
    expect(names[0]).toBe("manifest.mpd");
    expect(names).toEqual(expect.arrayContaining(["init-stream0.m4s", "init-stream1.m4s", "chunk-stream0-00001.m4s", "chunk-stream1-00001.m4s"]));
    for (const name of names.slice(1)) expect([name, served.get(name)?.type]).toEqual([expect.stringMatching(/^(init-stream\d|chunk-stream\d-\d{5})\.m4s$/), "video/iso.segment"]);
    // The manifest names its segments relative to itself, as they are served: no path of the transcoder.
    const manifest = manifests.get("manifest.mpd")!;
    expect(manifest).toContain('initialization="init-stream$RepresentationID$.m4s"');
    expect(manifest).toContain('media="chunk-stream$RepresentationID$-$Number%05d$.m4s"');
    expect(manifest).not.toMatch(/\/job\/|\/tmp\/|BaseURL/);
  });
});
