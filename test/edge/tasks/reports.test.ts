import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { JobEvent } from "../../../shared/schemas/jobs";
import { liveState } from "../../../edge/tasks/live-state";
import { storeOutput } from "../../../edge/tasks/outputs";
import { type Reporter, acceptReport } from "../../../edge/tasks/reports";
import { submitTask } from "../../../edge/tasks/submit";
import { createUser, fakeMp4 } from "../helpers";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -t 2 out.mp4";

/** A pending task of a fresh user, and who its transcoder reports as. */
async function newTask(): Promise<Reporter> {
  const { userId } = await createUser();
  const { task_id: taskId } = await submitTask(env, userId, { command: COMMAND, with_metadata: false });
  return { taskId, run: 0, userId };
}

/** A task with one output stored as the transcoder stores it, and the edge's receipt for it. */
async function storedOutput(): Promise<Reporter & { size: number; receipt: string }> {
  const task = await newTask();
  const bytes = fakeMp4(1024);
  const body = new Response(bytes).body;
  const stored = await storeOutput(env, { ...task, filename: "out.mp4", length: bytes.byteLength, contentType: "video/mp4", body });
  return { ...task, size: bytes.byteLength, receipt: stored.receipt };
}

async function logOf(task: Reporter): Promise<string | undefined> {
  return (await env.FILES.get(`logs/${task.userId}/${task.taskId}.log`))?.text();
}

describe("receipts: the edge's signed word that it stored an output", () => {
  it("completes a task whose every output carries its receipt without looking the objects up in R2", async () => {
    const task = await storedOutput();
    // Gone from R2 behind the edge's back: only a lookup would notice, and the receipt stands in for it.
    await env.FILES.delete(`outputs/${task.userId}/${task.taskId}/out.mp4`);
    await acceptReport(env, task, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size: task.size, receipt: task.receipt }] });
    expect(await liveState(env, task.taskId)).toMatchObject({ status: "completed", outputs: [{ filename: "out.mp4", size: task.size }] });
    expect((await liveState(env, task.taskId))!.outputs![0]).not.toHaveProperty("receipt");
  });

  it.each([
    ["without a receipt", (receipt: string) => ({ receipt: undefined as string | undefined, sizeDelta: 0, name: "out.mp4", fromOther: false, value: receipt })],
    ["with a receipt for another size", (receipt: string) => ({ receipt, sizeDelta: 1, name: "out.mp4", fromOther: false, value: receipt })],
    ["with a receipt for another file name", (receipt: string) => ({ receipt, sizeDelta: 0, name: "other.mp4", fromOther: false, value: receipt })],
    ["with another task's receipt", (receipt: string) => ({ receipt, sizeDelta: 0, name: "out.mp4", fromOther: true, value: receipt })],
    // One character changed well inside the MAC: the last ones may carry only padding bits, and the same bytes are no forgery.
    ["with a forged receipt", (receipt: string) => ({ receipt: `${receipt.slice(0, -10)}${receipt.at(-10) === "A" ? "B" : "A"}${receipt.slice(-9)}`, sizeDelta: 0, name: "out.mp4", fromOther: false, value: receipt })],
  ])("checks R2 for an output reported %s, and fails the task when the object is not there", async (_case, make) => {
    const mine = await storedOutput();
    const other = await storedOutput();
    const { receipt, sizeDelta, name, fromOther } = make(mine.receipt);
    const target = fromOther ? other : mine;
    await env.FILES.delete(`outputs/${target.userId}/${target.taskId}/${name}`);
    const output = { filename: name, size: target.size + sizeDelta, ...(receipt ? { receipt } : {}) };
    await acceptReport(env, target, { type: "completed", seq: 0, outputs: [output] });
    expect(await liveState(env, target.taskId)).toMatchObject({ status: "failed", error_code: "OUTPUT_UPLOAD_FAILED" });
  });
});

describe("ffmpeg's log on the terminal report", () => {
  it("stores the log of a completed report, and the task keeps no log of its own", async () => {
    const task = await storedOutput();
    const log = "frame=  10 fps=0.0\nvideo:2kB audio:0kB\n";
    expect(await acceptReport(env, task, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size: task.size, receipt: task.receipt }], log })).toEqual({ ok: true, cancel: false });
    const state = await liveState(env, task.taskId);
    expect(state).toMatchObject({ status: "completed" });
    expect(state).not.toHaveProperty("log");
    expect(await logOf(task)).toBe(log);
  });

  it("stores the log of a failed report", async () => {
    const task = await newTask();
    await acceptReport(env, task, { type: "failed", seq: 0, error: "ffmpeg exited with code 1", error_code: "FFMPEG_FAILED", log: "Error: nope\n" });
    expect(await liveState(env, task.taskId)).toMatchObject({ status: "failed", error_code: "FFMPEG_FAILED" });
    expect(await logOf(task)).toBe("Error: nope\n");
  });

  it("keeps only the last 256 KiB of a longer log", async () => {
    const task = await newTask();
    const tail = "t".repeat(256 * 1024 - 6) + "\nend.\n";
    await acceptReport(env, task, { type: "failed", seq: 0, error: "boom", error_code: "FFMPEG_FAILED", log: "h".repeat(1024) + tail });
    expect(await logOf(task)).toBe(tail);
  });

  it("answers a report of a run given up for a newer one with cancel, and records nothing of it", async () => {
    const task = await newTask();
    const stale: JobEvent = { type: "failed", seq: 0, error: "late", error_code: "FFMPEG_FAILED" };
    expect(await acceptReport(env, { ...task, run: 3 }, stale)).toEqual({ ok: true, cancel: true });
    expect(await liveState(env, task.taskId)).toMatchObject({ status: "pending" });
  });
});
