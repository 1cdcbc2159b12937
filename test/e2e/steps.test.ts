import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { probe } from "../../scripts/lib/media";
import { authed } from "../../scripts/lib/local-stack";
import { type TaskBody, submitTask, useStackWithClip, waitForEnd } from "./helpers";

type StepsTask = TaskBody & { command: string; steps: { index: number; status: string; progress: number; publish: boolean; outputs: { filename: string }[]; error?: string }[] };

const ctx = useStackWithClip({ seconds: 6, size: "640x360" });

async function runSteps(steps: { command: string; publish?: boolean }[]): Promise<{ task: StepsTask; progressSeen: number[] }> {
  const response = await submitTask(ctx.stack, ctx.user.key, { steps });
  expect(response.status, await response.clone().text()).toBe(201);
  const { task_id } = (await response.json()) as { task_id: string };
  const { task, progressSeen } = await waitForEnd(ctx.stack, ctx.user.key, task_id, 90_000);
  return { task: task as StepsTask, progressSeen };
}

async function download(output: { filename: string; url: string; size: number }): Promise<string> {
  const response = await fetch(output.url);
  expect(response.status).toBe(200);
  const bytes = new Uint8Array(await response.arrayBuffer());
  expect(bytes.byteLength).toBe(output.size);
  const path = join(ctx.dir, `steps-${output.filename}`);
  await writeFile(path, bytes);
  return path;
}

describe("a chained task", () => {
  it("runs trim → scale → thumbnail in one job folder, publishes all but the private trim, and keeps each step's log", async () => {
    const { task, progressSeen } = await runSteps([
      { command: `ffmpeg -i ${ctx.clipUrl} -ss 0 -t 2 clip.mp4`, publish: false },
      { command: "ffmpeg -i {{steps.0.outputs.clip.mp4}} -vf scale=160:-2 small.mp4" },
      { command: "ffmpeg -i {{steps.1.outputs.small.mp4}} -frames:v 1 thumb.jpg" },
    ]);
    expect(task.status, task.error).toBe("completed");
    expect(progressSeen).toEqual([...progressSeen].sort((a, b) => a - b));
    expect(task.outputs!.map((output) => output.filename)).toEqual(["small.mp4", "thumb.jpg"]);
    expect(task.steps.map((step) => [step.index, step.status, step.progress, step.publish, step.outputs.map((output) => output.filename)])).toEqual([
      [0, "completed", 100, false, []],
      [1, "completed", 100, true, ["small.mp4"]],
      [2, "completed", 100, true, ["thumb.jpg"]],
    ]);

    const small = await probe(await download(task.outputs![0]!));
    expect(small.streams.find((stream) => stream.codec_type === "video")).toMatchObject({ width: 160, height: 90 });
    expect(Number(small.format.duration)).toBeCloseTo(2, 0);
    const thumb = await probe(await download(task.outputs![1]!));
    expect(thumb.streams).toMatchObject([{ codec_type: "video", codec_name: "mjpeg", width: 160, height: 90 }]);

    const log = await ctx.stack.fetch(`/v1/tasks/${task.task_id}/logs`, authed(ctx.user.key));
    expect(log.status).toBe(200);
    const text = await log.text();
    const headers = [0, 1, 2].map((index) => text.indexOf(`[ffedge] step ${index}: ffmpeg -i `));
    expect(headers.every((at) => at >= 0), text.slice(0, 2000)).toBe(true);
    expect(headers).toEqual([...headers].sort((a, b) => a - b));
    // Each step's own ffmpeg output is under its header: the scale step writes small.mp4, the thumbnail step thumb.jpg.
    expect(text.slice(headers[1]!, headers[2]!)).toContain("small.mp4");
    expect(text.slice(headers[2]!)).toContain("thumb.jpg");
  }, 120_000);

  it("ends at the first step that fails, naming it, and never runs the steps after it", async () => {
    const { task } = await runSteps([
      { command: `ffmpeg -i ${ctx.clipUrl} -t 1 first.mp4` },
      { command: "ffmpeg -i {{steps.0.outputs.first.mp4}} -map 0:s second.mp4" },
      { command: "ffmpeg -i {{steps.1.outputs.second.mp4}} -frames:v 1 third.jpg" },
    ]);
    expect(task.status).toBe("failed");
    expect(task.error_code).toBe("FFMPEG_FAILED");
    expect(task.error).toMatch(/^step 1: /);
    expect(task.steps.map((step) => step.status)).toEqual(["completed", "failed", "pending"]);
    const log = await (await ctx.stack.fetch(`/v1/tasks/${task.task_id}/logs`, authed(ctx.user.key))).text();
    expect(log).toContain("[ffedge] step 1: ");
    expect(log).not.toContain("[ffedge] step 2: ");
  }, 120_000);
});
