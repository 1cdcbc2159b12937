import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { probe } from "../../scripts/lib/media";
import { authed } from "../../scripts/lib/local-stack";
import { getTask, submitTask, useStackWithClip, waitForEnd } from "./helpers";

const ctx = useStackWithClip({ seconds: 4, size: "640x360" });

/** Submits, waits for the end and ffprobes every output; the task must have completed. */
async function runToOutputs(body: Record<string, unknown>): Promise<{ command: string; outputs: Map<string, Awaited<ReturnType<typeof probe>>> }> {
  const response = await submitTask(ctx.stack, ctx.user.key, body);
  expect(response.status, await response.clone().text()).toBe(201);
  const { task_id } = (await response.json()) as { task_id: string };
  const { task } = await waitForEnd(ctx.stack, ctx.user.key, task_id, 90_000);
  expect(task.status, task.error).toBe("completed");
  const outputs = new Map<string, Awaited<ReturnType<typeof probe>>>();
  for (const output of task.outputs!) {
    const path = join(ctx.dir, `${task_id}-${output.filename}`);
    await writeFile(path, new Uint8Array(await (await fetch(output.url)).arrayBuffer()));
    outputs.set(output.filename, await probe(path));
  }
  const { command } = (await getTask(ctx.stack, ctx.user.key, task_id)) as unknown as { command: string };
  return { command, outputs };
}

describe("presets on the real stack", () => {
  it("saves a preset with typed parameters and runs it: the output has the width asked for", async () => {
    const saved = await ctx.stack.fetch("/v1/presets", authed(ctx.user.key, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({
        name: "web-small",
        command: "ffmpeg -i {{input}} -vf scale={{width}}:-2 -c:v libx264 -preset veryfast -crf {{crf}} -an out.mp4",
        parameters: {
          type: "object",
          properties: { input: { type: "string", examples: ["https://example.com/in.mp4"] }, width: { type: "integer", minimum: 16, maximum: 1920, default: 1280 }, crf: { type: "integer", minimum: 0, maximum: 51, default: 23 } },
          required: ["input"],
        },
      }),
    }));
    expect(saved.status, await saved.clone().text()).toBe(201);
    const { command, outputs } = await runToOutputs({ preset: "web-small", params: { input: ctx.clipUrl, width: 320, crf: 30 } });
    expect(command).toBe(`ffmpeg -i ${ctx.clipUrl} -vf scale=320:-2 -c:v libx264 -preset veryfast -crf 30 -an out.mp4`);
    const video = outputs.get("out.mp4")!.streams.find((stream) => stream.codec_type === "video")!;
    expect({ codec: video.codec_name, width: video.width, height: video.height }).toEqual({ codec: "h264", width: 320, height: 180 });
  }, 120_000);

  it("runs the built-in thumbnail preset: one JPEG of the width asked for", async () => {
    const { outputs } = await runToOutputs({ preset: "thumbnail", params: { video: ctx.clipUrl, at: 2, width: 160 } });
    const picture = outputs.get("thumbnail.jpg")!.streams[0]!;
    expect({ codec: picture.codec_name, width: picture.width, height: picture.height }).toEqual({ codec: "mjpeg", width: 160, height: 90 });
  }, 120_000);

  it("runs the built-in audio-extract and trim presets", async () => {
    const audio = (await runToOutputs({ preset: "audio-extract", params: { video: ctx.clipUrl } })).outputs.get("audio.mp3")!;
    expect(audio.streams.map((stream) => stream.codec_name)).toEqual(["mp3"]);
    const trimmed = (await runToOutputs({ preset: "trim", params: { video: ctx.clipUrl, start: 1, duration: 2 } })).outputs.get("trimmed.mp4")!;
    expect(Number(trimmed.format.duration)).toBeCloseTo(2, 0);
    expect(trimmed.streams.map((stream) => stream.codec_type).sort()).toEqual(["audio", "video"]);
  }, 180_000);

  it("refuses a parameter that would add an option, before anything runs", async () => {
    const response = await submitTask(ctx.stack, ctx.user.key, { preset: "thumbnail", params: { video: "-f lavfi" } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "PRESET_PARAMS_INVALID", param: "video" });
  });
});
