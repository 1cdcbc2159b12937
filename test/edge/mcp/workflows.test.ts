import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../../edge/lib/stubs";
import { api, createUser } from "../helpers";
import { answer, callTool, refusal } from "./call-tool";

const TRIM = "ffmpeg -i https://example.com/in.mp4 -ss 0 -t 2 clip.mp4";
const SCALE = "ffmpeg -i {{steps.0.outputs.clip.mp4}} -vf scale=160:-2 small.mp4";
const THUMB = "ffmpeg -i {{steps.1.outputs.small.mp4}} -frames:v 1 thumb.jpg";

type Step = { index: number; status: string; publish: boolean; outputs: { filename: string }[]; error?: string };
type McpTask = { task_id: string; status: string; error_code?: string; steps?: Step[]; failed_step?: number };

async function taskCount(key: string): Promise<number> {
  return (await (await api("/v1/tasks", key)).json<{ total: number }>()).total;
}

describe("run_steps", () => {
  it("submits a chain as one task whose result shows each step", async () => {
    const { key } = await createUser();
    const task = answer<McpTask>(await callTool(key, "run_steps", { steps: [{ command: TRIM, publish: false }, { command: SCALE }, { command: THUMB }], wait_seconds: 0 }));
    expect(task.status).toBe("pending");
    expect(task.steps!.map((step) => [step.index, step.status, step.publish])).toEqual([[0, "pending", false], [1, "pending", true], [2, "pending", true]]);
    expect(await (await api(`/v1/tasks/${task.task_id}`, key)).json()).toMatchObject({ command: [TRIM, SCALE, THUMB].join("\n") });
  });

  it("names the step a chain failed at, in get_task's structured result and text", async () => {
    const { key } = await createUser();
    const { task_id } = answer<McpTask>(await callTool(key, "run_steps", { steps: [{ command: TRIM }, { command: SCALE }, { command: THUMB }], wait_seconds: 0 }));
    const stub = taskStub(env, task_id);
    await stub.report({ type: "started", seq: 0 });
    await stub.report({ type: "failed", seq: 1, step: 1, error: "step 1: ffmpeg exited with code 1", error_code: "FFMPEG_FAILED" });
    const result = await callTool(key, "get_task", { task_id });
    const task = answer<McpTask>(result);
    expect(task).toMatchObject({ status: "failed", error_code: "FFMPEG_FAILED", failed_step: 1 });
    expect(task.steps!.map((step) => step.status)).toEqual(["completed", "failed", "pending"]);
    expect(result.content[0]!.text).toMatch(/failed at step 1 \(later steps did not run\) with FFMPEG_FAILED: step 1: ffmpeg exited/);
  });

  it("refuses a reference to a file no earlier step writes with STEP_REFERENCE_INVALID, and runs nothing", async () => {
    const { key } = await createUser();
    const text = refusal(await callTool(key, "run_steps", { steps: [{ command: TRIM }, { command: "ffmpeg -i {{steps.0.outputs.other.mp4}} small.mp4" }], wait_seconds: 0 }));
    expect(text).toMatch(/^STEP_REFERENCE_INVALID \(HTTP 400\): .*step 1/);
    expect(await taskCount(key)).toBe(0);
  });

  it("refuses a step the command policy refuses, naming the step", async () => {
    const { key } = await createUser();
    const text = refusal(await callTool(key, "run_steps", { steps: [{ command: TRIM }, { command: "ffmpeg -i /etc/passwd out.mp4" }], wait_seconds: 0 }));
    expect(text).toMatch(/^INPUT_NOT_ALLOWED \(HTTP 400\): step 1:/);
    expect(await taskCount(key)).toBe(0);
  });

  it("refuses a single step as malformed arguments", async () => {
    const { key } = await createUser();
    expect(refusal(await callTool(key, "run_steps", { steps: [{ command: TRIM }] }))).toMatch(/Input validation error/);
  });
});

describe("retry_task", () => {
  it("runs a finished task again as a new task; a task still pending is TASK_NOT_FINISHED", async () => {
    const { key } = await createUser();
    const first = answer<McpTask>(await callTool(key, "run_steps", { steps: [{ command: TRIM }, { command: SCALE }], wait_seconds: 0 }));
    expect(refusal(await callTool(key, "retry_task", { task_id: first.task_id, wait_seconds: 0 }))).toMatch(/^TASK_NOT_FINISHED \(HTTP 409\)/);
    answer(await callTool(key, "cancel_task", { task_id: first.task_id }));
    const again = answer<McpTask>(await callTool(key, "retry_task", { task_id: first.task_id, wait_seconds: 0 }));
    expect(again.task_id).not.toBe(first.task_id);
    expect(again.status).toBe("pending");
    expect(again.steps).toHaveLength(2);
    expect(await taskCount(key)).toBe(2);
  });

  it("answers another user's task as NOT_FOUND", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const { task_id } = answer<McpTask>(await callTool(alice.key, "run_ffmpeg", { command: TRIM, wait_seconds: 0 }));
    answer(await callTool(alice.key, "cancel_task", { task_id }));
    expect(refusal(await callTool(bob.key, "retry_task", { task_id, wait_seconds: 0 }))).toMatch(/^NOT_FOUND \(HTTP 404\)/);
  });
});

const SMALL = {
  name: "small",
  command: "ffmpeg -i {{input}} -vf scale={{width}}:-2 small.mp4",
  parameters: { type: "object", properties: { input: { type: "string", examples: ["https://example.com/in.mp4"] }, width: { type: "integer", minimum: 16, maximum: 1920, default: 320 } }, required: ["input"] },
};

describe("save_preset and delete_preset", () => {
  it("save a preset that list_presets shows and run_preset runs, then delete it", async () => {
    const { key } = await createUser();
    const saved = answer<{ id: string; name: string; builtin: boolean }>(await callTool(key, "save_preset", { ...SMALL, description: "A small copy" }));
    expect(saved).toMatchObject({ id: expect.stringMatching(/^pre_/), name: "small", builtin: false });
    const listed = answer<{ presets: { name: string }[] }>(await callTool(key, "list_presets", { builtin: false }));
    expect(listed.presets.map((preset) => preset.name)).toEqual(["small"]);

    const { task_id } = answer<McpTask>(await callTool(key, "run_preset", { preset: "small", params: { input: "https://example.com/a.mp4", width: 200 }, wait_seconds: 0 }));
    expect(await (await api(`/v1/tasks/${task_id}`, key)).json()).toMatchObject({ command: "ffmpeg -i https://example.com/a.mp4 -vf scale=200:-2 small.mp4" });

    expect(answer(await callTool(key, "delete_preset", { preset: "small" }))).toEqual({ deleted: true, id: "small" });
    expect(answer<{ total: number }>(await callTool(key, "list_presets", { builtin: false })).total).toBe(0);
    expect(refusal(await callTool(key, "delete_preset", { preset: "small" }))).toMatch(/^PRESET_NOT_FOUND \(HTTP 404\)/);
  });

  it("refuses a template the policy refuses (PRESET_INVALID), a name in use (PRESET_NAME_TAKEN) and deleting a built-in (PRESET_READ_ONLY)", async () => {
    const { key } = await createUser();
    expect(refusal(await callTool(key, "save_preset", { ...SMALL, command: "ffmpeg -i /etc/{{input}} small.mp4" }))).toMatch(/^PRESET_INVALID \(HTTP 400\)/);
    answer(await callTool(key, "save_preset", SMALL));
    expect(refusal(await callTool(key, "save_preset", SMALL))).toMatch(/^PRESET_NAME_TAKEN \(HTTP 409\)/);
    expect(refusal(await callTool(key, "delete_preset", { preset: "thumbnail" }))).toMatch(/^PRESET_READ_ONLY \(HTTP 403\)/);
  });
});
