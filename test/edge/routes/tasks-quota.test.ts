import { createExecutionContext, env, runDurableObjectAlarm, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../../edge/index";
import { taskStub } from "../../../edge/lib/stubs";
import { findTaskById } from "../../../edge/tasks/repository";
import { type LiveState, TIMEOUT_GRACE_MS } from "../../../edge/tasks/state";
import { expectProblem } from "../../helpers/problems";
import { createUser } from "../helpers";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -c:v libx264 out.mp4";

/** The whole Worker run with DAILY_TASK_SECONDS (and TASK_TIMEOUT_SECONDS, 600 in wrangler.toml) of our choosing. */
async function call(path: string, key: string, vars: Partial<Env>, init: RequestInit = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${key}`);
  const response = await worker.fetch(new Request(`http://localhost:8787${path}`, { ...init, headers }), { ...env, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

function submit(key: string, vars: Partial<Env>): Promise<Response> {
  return call("/v1/tasks", key, vars, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command: COMMAND }) });
}

async function timeLimitOf(taskId: string): Promise<number | null | undefined> {
  return (await findTaskById(env.DB, taskId))?.time_limit_seconds;
}

describe("the daily quota (DAILY_TASK_SECONDS) as a bound", () => {
  it("accepts one of six tasks submitted at once under a 3 s quota, with a time limit of the 3 s left", async () => {
    const { key } = await createUser();
    const responses = await Promise.all(Array.from({ length: 6 }, () => submit(key, { DAILY_TASK_SECONDS: "3" })));
    const accepted = responses.filter((response) => response.status === 201);
    expect(accepted).toHaveLength(1);
    for (const response of responses.filter((response) => response.status !== 201)) await expectProblem(response, 429, "QUOTA_EXCEEDED");
    const { task_id } = await accepted[0]!.json<{ task_id: string }>();
    expect(await timeLimitOf(task_id)).toBe(3);
    expect(await taskStub(env, task_id).getState()).toMatchObject({ time_limit_seconds: 3 });
  });

  it("holds each unfinished task's time limit, and gives it back, less what ran, when the task ends", async () => {
    const { key } = await createUser();
    const vars = { DAILY_TASK_SECONDS: "1000" };
    const first = (await (await submit(key, vars)).json<{ task_id: string }>()).task_id;
    const second = (await (await submit(key, vars)).json<{ task_id: string }>()).task_id;
    expect([await timeLimitOf(first), await timeLimitOf(second)]).toEqual([600, 400]);
    await expectProblem(await submit(key, vars), 429, "QUOTA_EXCEEDED");
    const me = await (await call("/v1/me", key, vars)).json<{ remaining_credits: number }>();
    expect(me.remaining_credits).toBe(0);
    // Canceled before it started: it ran for nothing, and its 600 s are free again.
    expect((await call(`/v1/tasks/${first}/cancel`, key, vars, { method: "POST" })).status).toBe(200);
    expect((await (await call("/v1/me", key, vars)).json<{ remaining_credits: number }>()).remaining_credits).toBe(600);
    const third = await submit(key, vars);
    expect(third.status).toBe(201);
    expect(await timeLimitOf((await third.json<{ task_id: string }>()).task_id)).toBe(600);
  });

  it("counts a task recorded before time limits at TASK_TIMEOUT_SECONDS", async () => {
    const { key, userId } = await createUser();
    await env.DB.prepare("INSERT INTO tasks (id, user_id, command, status, created_at) VALUES (?, ?, 'x', 'running', ?)").bind(`tsk_legacy${Date.now()}`, userId, new Date().toISOString()).run();
    await expectProblem(await submit(key, { DAILY_TASK_SECONDS: "600" }), 429, "QUOTA_EXCEEDED");
    expect((await submit(key, { DAILY_TASK_SECONDS: "700" })).status).toBe(201);
  });

  it("ends a task that runs past its own time limit with TIMEOUT, at the edge too", async () => {
    const { key } = await createUser();
    const { task_id } = await (await submit(key, { DAILY_TASK_SECONDS: "3" })).json<{ task_id: string }>();
    const stub = taskStub(env, task_id);
    await stub.report({ type: "started", seq: 0 });
    await runInDurableObject(stub, async (_instance, state) => {
      const live = (await state.storage.get<LiveState>("state"))!;
      const past = new Date(Date.now() - 3_000 - TIMEOUT_GRACE_MS - 1_000).toISOString();
      await state.storage.put("state", { ...live, started_at: past, heartbeat_at: new Date().toISOString() });
    });
    await runDurableObjectAlarm(stub);
    expect(await findTaskById(env.DB, task_id)).toMatchObject({ status: "failed", error_code: "TIMEOUT", error: "The task ran longer than its limit of 3 s." });
  });
});

describe("a task's own time limit (timeout_seconds)", () => {
  it("holds only what the submission asked for, never more than TASK_TIMEOUT_SECONDS", async () => {
    const { key } = await createUser();
    const vars = { DAILY_TASK_SECONDS: "100" };
    const limits: (number | null | undefined)[] = [];
    for (const timeout_seconds of [30, 30, 30]) {
      const response = await call("/v1/tasks", key, vars, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command: COMMAND, timeout_seconds }) });
      expect(response.status).toBe(201);
      limits.push(await timeLimitOf((await response.json<{ task_id: string }>()).task_id));
    }
    expect(limits).toEqual([30, 30, 30]);
    const longer = await call("/v1/tasks", key, { DAILY_TASK_SECONDS: "10000" }, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command: COMMAND, timeout_seconds: 5000 }) });
    expect(await timeLimitOf((await longer.json<{ task_id: string }>()).task_id)).toBe(600);
  });

  it.each([0, -5, 1.5, "60"])("refuses timeout_seconds %j with 400 VALIDATION_FAILED", async (timeout_seconds) => {
    const { key } = await createUser();
    const response = await call("/v1/tasks", key, {}, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ command: COMMAND, timeout_seconds }) });
    await expectProblem(response, 400, "VALIDATION_FAILED");
  });
});
