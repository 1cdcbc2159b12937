import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { probe } from "../../scripts/lib/media";
import { getTask, submitTask, useStackWithClip, waitForEnd } from "./helpers";
import { authed } from "../../scripts/lib/local-stack";

const ctx = useStackWithClip({ seconds: 20, size: "640x360" });

describe("a task from upload to download", () => {
  it("runs two outputs from one input, reports rising progress, and serves ffprobe-valid outputs", async () => {
    const response = await submitTask(ctx.stack, ctx.user.key, {
      command: `ffmpeg -i ${ctx.clipUrl} -c:v libx264 -preset veryslow -crf 30 small.mp4 -vn -c:a libmp3lame audio.mp3`,
      with_metadata: true,
    });
    expect(response.status).toBe(201);
    const { task_id } = (await response.json()) as { task_id: string };
    const { task, progressSeen, statusesSeen } = await waitForEnd(ctx.stack, ctx.user.key, task_id);

    expect(task.status, task.error).toBe("completed");
    expect(task.progress).toBe(100);
    expect(statusesSeen.at(-1)).toBe("completed");
    expect(progressSeen.every((value) => value >= 0 && value < 100)).toBe(true);
    expect(progressSeen).toEqual([...progressSeen].sort((a, b) => a - b));
    expect(new Set(progressSeen.filter((value) => value > 0)).size).toBeGreaterThanOrEqual(2);

    expect(task.outputs!.map((output) => output.filename)).toEqual(["small.mp4", "audio.mp3"]);
    for (const output of task.outputs!) {
      const download = await fetch(output.url);
      expect(download.status).toBe(200);
      const bytes = new Uint8Array(await download.arrayBuffer());
      expect(bytes.byteLength).toBe(output.size);
      const path = join(ctx.dir, `downloaded-${output.filename}`);
      await writeFile(path, bytes);
      const info = await probe(path);
      expect(info.streams.length).toBeGreaterThan(0);
      expect(output.metadata).toMatchObject({ format: expect.any(Object), streams: expect.any(Array) });
    }
    const video = await probe(join(ctx.dir, "downloaded-small.mp4"));
    expect(video.streams.find((s) => s.codec_type === "video")?.codec_name).toBe("h264");
    expect(Number(video.format.duration)).toBeCloseTo(20, 0);
  });

  it("omits metadata unless asked", async () => {
    const { task_id } = (await (await submitTask(ctx.stack, ctx.user.key, { command: `ffmpeg -i ${ctx.clipUrl} -t 1 -c copy cut.mp4` })).json()) as { task_id: string };
    const { task } = await waitForEnd(ctx.stack, ctx.user.key, task_id);
    expect(task.status, task.error).toBe("completed");
    expect(task.outputs![0]!.metadata).toBeUndefined();
  });

  it("ends a failing command as failed with the tail of ffmpeg's stderr", async () => {
    const { task_id } = (await (await submitTask(ctx.stack, ctx.user.key, { command: `ffmpeg -i ${ctx.clipUrl} -c:v libx264 -profile:v nonsense bad.mp4` })).json()) as { task_id: string };
    const { task } = await waitForEnd(ctx.stack, ctx.user.key, task_id);
    expect(task.status).toBe("failed");
    expect(task.error_code).toBe("FFMPEG_FAILED");
    expect(task.error).toMatch(/nonsense|Invalid|Error/i);
  });

  it("fails cleanly when an input cannot be downloaded", async () => {
    const missing = ctx.clipUrl.replace(/[0-9a-f]{32}/, "0".repeat(32));
    const { task_id } = (await (await submitTask(ctx.stack, ctx.user.key, { command: `ffmpeg -i ${missing} out.mp4` })).json()) as { task_id: string };
    const { task } = await waitForEnd(ctx.stack, ctx.user.key, task_id);
    expect(task).toMatchObject({ status: "failed", error_code: "INPUT_DOWNLOAD_FAILED" });
  });

  it("hides a task from another user", async () => {
    const bob = await ctx.stack.createUser();
    const { task_id } = (await (await submitTask(ctx.stack, ctx.user.key, { command: `ffmpeg -i ${ctx.clipUrl} -t 1 -c copy mine.mp4` })).json()) as { task_id: string };
    expect((await ctx.stack.fetch(`/v1/tasks/${task_id}`, authed(bob.key))).status).toBe(404);
    const list = (await (await ctx.stack.fetch("/v1/tasks", authed(bob.key))).json()) as { total: number };
    expect(list.total).toBe(0);
    await waitForEnd(ctx.stack, ctx.user.key, task_id);
  });

  it("lists the caller's tasks newest first", async () => {
    const list = (await (await ctx.stack.fetch("/v1/tasks?limit=100", authed(ctx.user.key))).json()) as { total: number; tasks: { created_at: string }[] };
    expect(list.total).toBeGreaterThanOrEqual(4);
    const times = list.tasks.map((task) => task.created_at);
    expect(times).toEqual([...times].sort().reverse());
    expect(await getTask(ctx.stack, ctx.user.key, "tsk_unknown")).toMatchObject({ code: "NOT_FOUND" });
  });
});
