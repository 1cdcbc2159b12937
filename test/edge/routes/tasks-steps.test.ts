import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../../edge/lib/stubs";
import { findTaskById } from "../../../edge/tasks/repository";
import { api, createUser, postJson } from "../helpers";

const TRIM = "ffmpeg -i https://example.com/in.mp4 -ss 0 -t 2 clip.mp4";
const SCALE = "ffmpeg -i {{steps.0.outputs.clip.mp4}} -vf scale=160:-2 small.mp4";
const THUMB = "ffmpeg -i {{steps.1.outputs.small.mp4}} -frames:v 1 thumb.jpg";
const STEPS = [{ command: TRIM, publish: false }, { command: SCALE }, { command: THUMB }];

interface TaskBody {
  task_id: string;
  status: string;
  progress: number;
  command: string;
  error?: string;
  outputs?: { filename: string; url: string }[];
  steps?: { index: number; command: string; status: string; progress: number; publish: boolean; outputs: { filename: string }[]; error?: string }[];
}

async function submitSteps(key: string): Promise<string> {
  const response = await postJson("/v1/tasks", key, { steps: STEPS });
  expect(response.status).toBe(201);
  return (await response.json<{ task_id: string }>()).task_id;
}

async function taskOf(key: string, taskId: string): Promise<TaskBody> {
  const response = await api(`/v1/tasks/${taskId}`, key);
  expect(response.status).toBe(200);
  return response.json<TaskBody>();
}

async function taskCount(userId: string): Promise<number> {
  return (await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE user_id = ?").bind(userId).first<{ n: number }>())!.n;
}

describe("POST /v1/tasks with steps", () => {
  it("accepts a chain, keeps its steps for the job and shows each step pending, the commands one a line", async () => {
    const { key } = await createUser();
    const taskId = await submitSteps(key);
    const task = await taskOf(key, taskId);
    expect(task).toMatchObject({ status: "pending", command: [TRIM, SCALE, THUMB].join("\n") });
    expect(task.steps).toEqual([
      { index: 0, command: TRIM, status: "pending", progress: 0, publish: false, outputs: [] },
      { index: 1, command: SCALE, status: "pending", progress: 0, publish: true, outputs: [] },
      { index: 2, command: THUMB, status: "pending", progress: 0, publish: true, outputs: [] },
    ]);
    await runInDurableObject(taskStub(env, taskId), async (_instance, state) => {
      expect(await state.storage.get("job")).toMatchObject({ command: TRIM, steps: [{ command: TRIM, publish: false }, { command: SCALE, publish: true }, { command: THUMB, publish: true }] });
    });
    // The record keeps the commands one a line, for every reader of `command`, and the steps beside them.
    const row = await findTaskById(env.DB, taskId);
    expect(row?.command).toBe([TRIM, SCALE, THUMB].join("\n"));
    expect(JSON.parse(row?.steps ?? "null")).toEqual([{ command: TRIM, publish: false }, { command: SCALE, publish: true }, { command: THUMB, publish: true }]);
  });

  it.each([
    ["both a command and steps", { command: TRIM, steps: STEPS }, "VALIDATION_FAILED"],
    ["neither a command nor steps", { with_metadata: false }, "VALIDATION_FAILED"],
    ["a single step", { steps: [{ command: TRIM }] }, "VALIDATION_FAILED"],
    ["more than 10 steps", { steps: Array.from({ length: 11 }, (_, index) => ({ command: `ffmpeg -i https://example.com/in.mp4 -t 1 out${index}.mp4` })) }, "VALIDATION_FAILED"],
    ["a reference to a later step", { steps: [{ command: "ffmpeg -i {{steps.1.outputs.small.mp4}} a.mp4" }, { command: TRIM }] }, "STEP_REFERENCE_INVALID"],
    ["a reference to an output that does not exist", { steps: [{ command: TRIM }, { command: "ffmpeg -i {{steps.0.outputs.nope.mp4}} b.mp4" }] }, "STEP_REFERENCE_INVALID"],
    ["a reference inside a quoted filter argument", { steps: [{ command: TRIM }, { command: `ffmpeg -i https://example.com/in.mp4 -vf "movie={{steps.0.outputs.clip.mp4}}" b.mp4` }] }, "STEP_REFERENCE_INVALID"],
    ["a step the policy refuses", { steps: [{ command: TRIM }, { command: "ffmpeg -i /etc/passwd b.mp4" }] }, "INPUT_NOT_ALLOWED"],
  ])("refuses %s with a 400 problem, recording nothing", async (_what, body, code) => {
    const { key, userId } = await createUser();
    const response = await postJson("/v1/tasks", key, body);
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(await response.json()).toMatchObject({ code });
    expect(await taskCount(userId)).toBe(0);
  });

  it("refuses a step member it does not take, naming it, instead of ignoring it", async () => {
    const { key, userId } = await createUser();
    const response = await postJson("/v1/tasks", key, { steps: [{ command: TRIM }, { command: SCALE, outputs: ["small.mp4"] }] });
    expect(response.status).toBe(400);
    const problem = await response.json<{ code: string; detail: string; issues: { path: unknown[]; message: string }[] }>();
    expect(problem.code).toBe("VALIDATION_FAILED");
    expect(problem.detail).toMatch(/steps\.1: .*"outputs"/);
    expect(problem.issues).toEqual([expect.objectContaining({ path: ["steps", 1], message: expect.stringContaining("outputs") })]);
    expect(await taskCount(userId)).toBe(0);
  });

  it("refuses publish: false on the last step, whose outputs are always published", async () => {
    const { key, userId } = await createUser();
    const response = await postJson("/v1/tasks", key, { steps: [{ command: TRIM }, { command: SCALE, publish: false }] });
    expect(response.status).toBe(400);
    const problem = await response.json<{ code: string; detail: string; issues: { path: unknown[] }[] }>();
    expect(problem).toMatchObject({ code: "VALIDATION_FAILED", issues: [{ path: ["steps", 1, "publish"] }] });
    expect(problem.detail).toMatch(/steps\.1\.publish: the last step's outputs .* always published/);
    expect(await taskCount(userId)).toBe(0);
  });

  it("names the step and the reference at fault", async () => {
    const { key } = await createUser();
    const response = await postJson("/v1/tasks", key, { steps: [{ command: TRIM }, { command: "ffmpeg -i {{steps.0.outputs.nope.mp4}} b.mp4" }] });
    expect(await response.json()).toMatchObject({ code: "STEP_REFERENCE_INVALID", step: 1, token: "{{steps.0.outputs.nope.mp4}}", detail: expect.stringMatching(/^step 1: .*'clip\.mp4'/) });
  });
});

describe("a chained task's steps", () => {
  it("follow the run's reports: earlier steps completed, the current one running with its own progress", async () => {
    const { key } = await createUser();
    const taskId = await submitSteps(key);
    const stub = taskStub(env, taskId);
    await stub.report({ type: "started", seq: 0 });
    await stub.report({ type: "progress", seq: 1, progress: 50, step: 1, step_progress: 50 });
    const task = await taskOf(key, taskId);
    expect(task.progress).toBe(50);
    expect(task.steps?.map((step) => [step.status, step.progress])).toEqual([["completed", 100], ["running", 50], ["pending", 0]]);
  });

  it("end completed with each published output under the step that wrote it, private ones nowhere", async () => {
    const { key, userId } = await createUser();
    const taskId = await submitSteps(key);
    for (const name of ["small.mp4", "thumb.jpg"]) await env.FILES.put(`outputs/${userId}/${taskId}/${name}`, "0123456789");
    const stub = taskStub(env, taskId);
    await stub.report({ type: "started", seq: 0 });
    await stub.report({ type: "completed", seq: 1, outputs: [{ filename: "small.mp4", size: 10, step: 1 }, { filename: "thumb.jpg", size: 10, step: 2 }] });
    const task = await taskOf(key, taskId);
    expect(task.status).toBe("completed");
    expect(task.outputs?.map((output) => output.filename)).toEqual(["small.mp4", "thumb.jpg"]);
    expect(task.steps?.map((step) => [step.status, step.outputs.map((output) => output.filename)])).toEqual([["completed", []], ["completed", ["small.mp4"]], ["completed", ["thumb.jpg"]]]);
  });

  it("end failed at the step the transcoder names, the steps after it never run", async () => {
    const { key } = await createUser();
    const taskId = await submitSteps(key);
    const stub = taskStub(env, taskId);
    await stub.report({ type: "started", seq: 0 });
    await stub.report({ type: "failed", seq: 1, step: 1, error: "step 1: ffmpeg exited with code 1", error_code: "FFMPEG_FAILED" });
    const task = await taskOf(key, taskId);
    expect(task).toMatchObject({ status: "failed", error: "step 1: ffmpeg exited with code 1", error_code: "FFMPEG_FAILED" });
    expect(task.steps?.map((step) => [step.status, step.error])).toEqual([["completed", undefined], ["failed", "step 1: ffmpeg exited with code 1"], ["pending", undefined]]);
  });

  it("keep the progress a chain reached when a step fails at once: the task shows the completed step's share", async () => {
    const { key } = await createUser();
    const taskId = await submitSteps(key);
    const stub = taskStub(env, taskId);
    await stub.report({ type: "started", seq: 0 });
    await stub.report({ type: "failed", seq: 1, step: 1, error: "step 1: ffmpeg exited with code 1", error_code: "FFMPEG_FAILED" });
    const task = await taskOf(key, taskId);
    expect(task.progress).toBe(33);
    expect(task.steps?.map((step) => [step.status, step.progress])).toEqual([["completed", 100], ["failed", 0], ["pending", 0]]);
  });

  it("show a step that failed part-way with the progress it reached, after the task's end too", async () => {
    const { key } = await createUser();
    const response = await postJson("/v1/tasks", key, { steps: [{ command: TRIM }, { command: SCALE }] });
    const { task_id: taskId } = await response.json<{ task_id: string }>();
    const stub = taskStub(env, taskId);
    await stub.report({ type: "started", seq: 0 });
    await stub.report({ type: "progress", seq: 1, progress: 22, step: 0, step_progress: 44 });
    // An end the run does not attribute to a step (a time limit): the task's progress places it.
    await stub.report({ type: "failed", seq: 2, error: "The task ran past its time limit.", error_code: "TIMEOUT" });
    const task = await taskOf(key, taskId);
    expect(task).toMatchObject({ status: "failed", progress: 22, error_code: "TIMEOUT" });
    expect(task.steps?.map((step) => [step.status, step.progress])).toEqual([["failed", 44], ["pending", 0]]);
  });
});
