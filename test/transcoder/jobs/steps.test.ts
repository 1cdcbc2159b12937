import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { TranscodeJob } from "../../../shared/schemas/jobs";
import { useJobWorld } from "../helpers/job-world";
import { probeFile } from "../helpers/media";
import { jobFor, postJob } from "../helpers/transcoder";

const world = useJobWorld();

function chained(steps: { command: string; publish?: boolean }[]): TranscodeJob {
  const withPublish = steps.map((step, index) => ({ command: step.command, publish: index === steps.length - 1 || step.publish !== false }));
  return jobFor(world.edge, steps[0]!.command, { steps: withPublish });
}

async function probed(taskId: string, filename: string) {
  const file = path.join(os.tmpdir(), `${taskId}-${filename}`);
  await writeFile(file, world.edge.uploads.get(`${taskId}/${filename}`)!);
  return probeFile(file);
}

describe("a chained job", () => {
  it("runs its steps in order in one folder, downloading the input once, and uploads all but the private outputs, each named by its step", async () => {
    const job = chained([
      { command: `ffmpeg -i ${world.media.url("/clip.mp4")} -ss 0 -t 2 -c:v libx264 -preset ultrafast cut.mp4`, publish: false },
      { command: "ffmpeg -i {{steps.0.outputs.cut.mp4}} -vf scale=80:-2 -c:v libx264 -preset ultrafast small.mp4" },
      { command: "ffmpeg -i {{steps.1.outputs.small.mp4}} -frames:v 1 thumb.jpg" },
    ]);
    const hitsBefore = world.media.hits.length;
    expect((await postJob(world.transcoder.app, job)).statusCode).toBe(202);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    if (terminal.type !== "completed") throw new Error(JSON.stringify(terminal));
    expect(world.media.hits.slice(hitsBefore).filter((hit) => hit === "/clip.mp4")).toHaveLength(1);
    expect(terminal.outputs.map((output) => [output.filename, output.step])).toEqual([["small.mp4", 1], ["thumb.jpg", 2]]);
    expect(world.edge.uploadRequests(job.task_id).map((upload) => upload.filename).sort()).toEqual(["small.mp4", "thumb.jpg"]);
    const small = await probed(job.task_id, "small.mp4");
    expect(small.streams.find((stream) => stream.codec_type === "video")).toMatchObject({ width: 80 });
    expect(Number(small.format.duration)).toBeCloseTo(2, 0);
    expect((await probed(job.task_id, "thumb.jpg")).streams[0]).toMatchObject({ codec_name: "mjpeg", width: 80 });

    // Progress is the whole task's, each step weighing a third, and names the step.
    const progress = world.edge.events(job.task_id).flatMap((event) => (event.type === "progress" ? [event] : []));
    expect(progress.map((event) => event.progress)).toEqual(progress.map((event) => event.progress).sort((a, b) => a - b));
    for (const event of progress) expect(event.progress).toBeCloseTo(((event.step! + event.step_progress! / 100) / 3) * 100, 5);

    // One log, a header per step, no local paths.
    const log = terminal.log ?? "";
    expect(log.indexOf("[ffedge] step 0: ")).toBe(0);
    expect(log.indexOf("[ffedge] step 1: ")).toBeGreaterThan(0);
    expect(log.indexOf("[ffedge] step 2: ")).toBeGreaterThan(log.indexOf("[ffedge] step 1: "));
    expect(log).not.toContain(world.transcoder.workRoot);
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("ends at the first failing step with the step named, running none after it and uploading nothing", async () => {
    const job = chained([
      { command: `ffmpeg -i ${world.media.url("/clip.mp4")} -t 1 first.mp4` },
      { command: "ffmpeg -i {{steps.0.outputs.first.mp4}} -map 0:s second.mp4" },
      { command: "ffmpeg -i {{steps.1.outputs.second.mp4}} -frames:v 1 third.jpg" },
    ]);
    await postJob(world.transcoder.app, job);
    const terminal = await world.edge.waitForTerminal(job.task_id);
    expect(terminal).toMatchObject({ type: "failed", error_code: "FFMPEG_FAILED", step: 1, error: expect.stringMatching(/^step 1: Stream map '0:s' matches no streams/) });
    if (terminal.type !== "failed") return;
    expect(terminal.log).toContain("[ffedge] step 1: ");
    expect(terminal.log).not.toContain("[ffedge] step 2: ");
    expect(world.edge.uploadRequests(job.task_id)).toEqual([]);
    expect(await world.transcoder.leftovers()).toEqual([]);
  });

  it("refuses a chain whose reference the policy refuses, as COMMAND_REJECTED naming the step", async () => {
    const job = chained([
      { command: `ffmpeg -i ${world.media.url("/clip.mp4")} -t 1 first.mp4` },
      { command: "ffmpeg -i {{steps.2.outputs.first.mp4}} second.mp4" },
      { command: "ffmpeg -i {{steps.0.outputs.first.mp4}} third.mp4" },
    ]);
    await postJob(world.transcoder.app, job);
    expect(await world.edge.waitForTerminal(job.task_id)).toMatchObject({ type: "failed", error_code: "COMMAND_REJECTED", error: expect.stringMatching(/^step 1: /) });
  });
});
