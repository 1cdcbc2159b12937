import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../../edge/lib/stubs";
import { expectProblem } from "../../helpers/problems";
import { api, createUser, postJson } from "../helpers";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -c:v libx264 -t 2 out.mp4 -vn -c:a aac out.m4a";
/** An input as owners share them: a presigned URL whose query string is the credential. */
const SIGNED_INPUT_COMMAND = "ffmpeg -i 'https://storage.example.com/in.mp4?X-Amz-Credential=AKIA&X-Amz-Signature=deadbeef' -t 2 out.mp4";

async function submit(key: string, body: Record<string, unknown> = { command: COMMAND }) {
  return postJson("/v1/tasks", key, body);
}

describe("POST /v1/tasks", () => {
  it("accepts a command and answers 201 with a pending task", async () => {
    const { key } = await createUser();
    const response = await submit(key);
    expect(response.status).toBe(201);
    const body = await response.json<{ task_id: string; status: string }>();
    expect(body.task_id).toMatch(/^tsk_[0-9a-f]{24}$/);
    expect(body.status).toBe("pending");
  });

  it.each([
    ["", "VALIDATION_FAILED"],
    ["ffmpeg out.mp4", "NO_INPUT"],
    ["ffmpeg -i https://example.com/in.mp4", "NO_OUTPUT"],
    ["ffmpeg -i 'https://example.com/in.mp4 out.mp4", "COMMAND_UNBALANCED_QUOTES"],
    ["ffmpeg -i https://example.com/in.mp4 /tmp/out.mp4", "OUTPUT_NOT_ALLOWED"],
    ["ffmpeg -i https://example.com/in.mp4 https://evil.example/out.mp4", "OUTPUT_NOT_ALLOWED"],
    ["ffmpeg -i /etc/passwd out.mp4", "INPUT_NOT_ALLOWED"],
    ["ffmpeg -i https://example.com/in.mp4 out.mp4; id", "COMMAND_SHELL_OPERATOR"],
    ["sh -c id", "PROGRAM_NOT_ALLOWED"],
  ])("refuses %j with 400 %s naming the problem", async (command, code) => {
    const { key } = await createUser();
    const response = await submit(key, { command });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    const problem = await response.json<{ code: string; detail: string }>();
    expect(problem.code).toBe(code);
    expect(problem.detail.length).toBeGreaterThan(10);
  });

  it("names the offending token", async () => {
    const { key } = await createUser();
    const problem = await (await submit(key, { command: "ffmpeg -i https://example.com/in.mp4 ../escape.mp4" })).json<{ token: string }>();
    expect(problem.token).toBe("../escape.mp4");
  });

  it("refuses a webhook on a private address", async () => {
    const { key } = await createUser();
    const response = await submit(key, { command: COMMAND, webhook: "https://169.254.169.254/hook" });
    expect(response.status).toBe(400);
    expect((await response.json<{ code: string }>()).code).toBe("URL_HOST_BLOCKED");
  });

  it("requires an API key", async () => {
    expect((await postJson("/v1/tasks", undefined, { command: COMMAND })).status).toBe(401);
  });

  it("refuses new tasks with 429 QUOTA_EXCEEDED once today's DAILY_TASK_SECONDS are used, until 00:00 UTC", async () => {
    const { key, userId } = await createUser();
    const now = Date.now();
    await env.DB.prepare("INSERT INTO tasks (id, user_id, command, status, created_at, started_at, finished_at) VALUES (?, ?, 'x', 'completed', ?, ?, ?)")
      .bind(`tsk_quota${now}`, userId, new Date(now - 40_001_000).toISOString(), new Date(now - 40_000_000).toISOString(), new Date(now).toISOString())
      .run();
    const response = await submit(key);
    await expectProblem(response, 429, "QUOTA_EXCEEDED");
    const retryAfter = Number(response.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    const rows = await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE user_id = ?").bind(userId).first<{ n: number }>();
    expect(rows!.n).toBe(1);
  });
});

describe("GET /v1/tasks/{task_id}", () => {
  it("returns the task with its timestamps", async () => {
    const { key } = await createUser();
    const { task_id } = await (await submit(key)).json<{ task_id: string }>();
    const response = await api(`/v1/tasks/${task_id}`, key);
    expect(response.status).toBe(200);
    const task = await response.json<Record<string, unknown>>();
    expect(task).toMatchObject({ task_id, progress: 0, command: COMMAND, with_metadata: false, started_at: null, finished_at: null, elapsed: null });
    expect(["pending", "failed"]).toContain(task.status);
    expect(task.total_elapsed).toMatch(/^\d+\.\d{2}$/);
  });

  it("sends elapsed and total_elapsed as strings of seconds with two decimals, as FFHub does", async () => {
    const { key } = await createUser();
    const { task_id } = await (await submit(key)).json<{ task_id: string }>();
    await env.DB.prepare("UPDATE tasks SET created_at = ?, started_at = ?, finished_at = ?, status = 'failed', error = 'x' WHERE id = ?")
      .bind("2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.700Z", "2026-01-01T00:03:36.000Z", task_id)
      .run();
    const task = await (await api(`/v1/tasks/${task_id}`, key)).json<Record<string, unknown>>();
    expect(task).toMatchObject({ elapsed: "215.30", total_elapsed: "216.00" });
  });

  it("answers without a key, by id, with only what FFHub's clients read: status, progress, outputs, error and timings", async () => {
    const { key, userId } = await createUser();
    const { task_id } = await (await submit(key, { command: SIGNED_INPUT_COMMAND, with_metadata: true })).json<{ task_id: string }>();
    await env.FILES.put(`outputs/${userId}/${task_id}/out.mp4`, "abc", { customMetadata: { expires_at: new Date(Date.now() + 60_000).toISOString() } });
    const stub = taskStub(env, task_id);
    await stub.report({ type: "started", seq: 100 });
    await stub.report({ type: "completed", seq: 101, outputs: [{ filename: "out.mp4", size: 3, metadata: { format: { duration: "2.0" } } }] });
    const owner = await (await api(`/v1/tasks/${task_id}`, key)).json<Record<string, unknown>>();
    const anonymous = await api(`/v1/tasks/${task_id}`, undefined);
    expect(anonymous.status).toBe(200);
    const body = await anonymous.json<Record<string, unknown>>();
    expect(Object.keys(body).sort()).toEqual(["created_at", "elapsed", "finished_at", "outputs", "progress", "started_at", "status", "task_id", "total_elapsed"]);
    for (const field of Object.keys(body)) expect(body[field]).toEqual(owner[field]);
    expect(JSON.stringify(body)).not.toContain("in.mp4");
    await expectProblem(await api("/v1/tasks/tsk_000000000000000000000000", undefined), 404, "NOT_FOUND");
  });

  it("never shows the command, its signed input URLs or ffmpeg's messages without a key", async () => {
    const { key } = await createUser();
    const { task_id } = await (await submit(key, { command: SIGNED_INPUT_COMMAND })).json<{ task_id: string }>();
    const messages = "Input 1 (https://storage.example.com/in.mp4) could not be downloaded: 403\n  title: board meeting X-Amz-Signature=deadbeef";
    await taskStub(env, task_id).report({ type: "failed", seq: 100, error: messages, error_code: "INPUT_DOWNLOAD_FAILED" });
    expect(await (await api(`/v1/tasks/${task_id}`, key)).json()).toMatchObject({ command: SIGNED_INPUT_COMMAND, error: messages });
    const anonymous = await (await api(`/v1/tasks/${task_id}`, undefined)).json<Record<string, unknown>>();
    expect(anonymous).toMatchObject({ status: "failed", error_code: "INPUT_DOWNLOAD_FAILED" });
    expect(anonymous.error).toEqual(expect.any(String));
    const text = JSON.stringify(anonymous);
    for (const secret of ["storage.example.com", "deadbeef", "board meeting", "in.mp4", "command", "with_metadata"]) expect(text).not.toContain(secret);
  });

  it("still refuses a wrong key, and keeps every other task route behind a key", async () => {
    const { key } = await createUser();
    const { task_id } = await (await submit(key)).json<{ task_id: string }>();
    await expectProblem(await api(`/v1/tasks/${task_id}`, "ffe_wrongwrongwrongwrongwrongwrongwrongwrongwro"), 401, "UNAUTHORIZED");
    await expectProblem(await api(`/v1/tasks/${task_id}/logs`, undefined), 401, "UNAUTHORIZED");
    await expectProblem(await api(`/v1/tasks/${task_id}/webhooks`, undefined), 401, "UNAUTHORIZED");
    await expectProblem(await api(`/v1/tasks/${task_id}`, undefined, { method: "DELETE" }), 401, "UNAUTHORIZED");
    await expectProblem(await api("/v1/tasks", undefined), 401, "UNAUTHORIZED");
  });

  it("shows live progress from the task's Durable Object while running", async () => {
    const { key } = await createUser();
    const { task_id } = await (await submit(key)).json<{ task_id: string }>();
    const stub = taskStub(env, task_id);
    await stub.report({ type: "started", seq: 100 });
    await stub.report({ type: "progress", seq: 101, progress: 42.7 });
    const task = await (await api(`/v1/tasks/${task_id}`, key)).json<Record<string, unknown>>();
    expect(task).toMatchObject({ status: "running", progress: 42 });
    expect(task.started_at).not.toBeNull();
  });

  it("lists outputs with CDN URLs once completed", async () => {
    const { key, userId } = await createUser();
    const { task_id } = await (await submit(key)).json<{ task_id: string }>();
    await env.FILES.put(`outputs/${userId}/${task_id}/out.mp4`, "abc", { customMetadata: { expires_at: new Date(Date.now() + 60_000).toISOString() } });
    const stub = taskStub(env, task_id);
    await stub.report({ type: "started", seq: 100 });
    await stub.report({ type: "completed", seq: 101, outputs: [{ filename: "out.mp4", size: 3, metadata: { format: {} } }] });
    const task = await (await api(`/v1/tasks/${task_id}`, key)).json<{ status: string; progress: number; outputs: unknown[] }>();
    expect(task.status).toBe("completed");
    expect(task.progress).toBe(100);
    expect(task.outputs).toEqual([{ filename: "out.mp4", url: `http://localhost:8787/outputs/${userId}/${task_id}/out.mp4`, size: 3 }]);
    const download = await api(`/outputs/${userId}/${task_id}/out.mp4`, undefined);
    expect(await download.text()).toBe("abc");
  });

  it("shows error and error_code when failed", async () => {
    const { key } = await createUser();
    const { task_id } = await (await submit(key)).json<{ task_id: string }>();
    await taskStub(env, task_id).report({ type: "failed", seq: 100, error: "ffmpeg exited with code 1: Invalid data", error_code: "FFMPEG_FAILED" });
    const task = await (await api(`/v1/tasks/${task_id}`, key)).json<Record<string, unknown>>();
    expect(task).toMatchObject({ status: "failed", error: "ffmpeg exited with code 1: Invalid data", error_code: "FFMPEG_FAILED" });
    expect(task.outputs).toBeUndefined();
  });

  it("returns 404 for another user's task and for an unknown id", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const { task_id } = await (await submit(alice.key)).json<{ task_id: string }>();
    const theirs = await api(`/v1/tasks/${task_id}`, bob.key);
    expect(theirs.status).toBe(404);
    expect((await theirs.json<{ code: string }>()).code).toBe("NOT_FOUND");
    expect((await api("/v1/tasks/tsk_000000000000000000000000", alice.key)).status).toBe(404);
  });
});

describe("GET /v1/tasks", () => {
  it("lists only the caller's tasks, newest first, with total and paging", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await (await submit(alice.key)).json<{ task_id: string }>()).task_id);
    await submit(bob.key);
    const page = await (await api("/v1/tasks?limit=2", alice.key)).json<{ total: number; tasks: { task_id: string }[] }>();
    expect(page.total).toBe(3);
    expect(page.tasks.map((task) => task.task_id)).toEqual([ids[2], ids[1]]);
    const rest = await (await api("/v1/tasks?limit=2&offset=2", alice.key)).json<{ tasks: { task_id: string }[] }>();
    expect(rest.tasks.map((task) => task.task_id)).toEqual([ids[0]]);
  });

  it("filters by status", async () => {
    const { key } = await createUser();
    const { task_id } = await (await submit(key)).json<{ task_id: string }>();
    await submit(key);
    await taskStub(env, task_id).failTask("CANCELED", "canceled");
    const failed = await (await api("/v1/tasks?status=failed", key)).json<{ total: number; tasks: { task_id: string }[] }>();
    expect(failed.tasks.map((task) => task.task_id)).toEqual([task_id]);
  });

  it("lists canceled tasks alone with status=canceled, and with every other failed one under status=failed", async () => {
    const { key } = await createUser();
    const canceled = (await (await submit(key)).json<{ task_id: string }>()).task_id;
    const timedOut = (await (await submit(key)).json<{ task_id: string }>()).task_id;
    await submit(key);
    expect((await api(`/v1/tasks/${canceled}/cancel`, key, { method: "POST" })).status).toBe(200);
    await taskStub(env, timedOut).failTask("TIMEOUT", "too long");
    const list = async (status: string) => (await (await api(`/v1/tasks?status=${status}`, key)).json<{ total: number; tasks: { task_id: string; status: string; canceled_at?: string }[] }>());
    const onlyCanceled = await list("canceled");
    expect(onlyCanceled.total).toBe(1);
    expect(onlyCanceled.tasks.map((task) => [task.task_id, task.status, typeof task.canceled_at])).toEqual([[canceled, "failed", "string"]]);
    expect((await list("failed")).tasks.map((task) => task.task_id).sort()).toEqual([canceled, timedOut].sort());
    expect((await list("failed")).tasks.find((task) => task.task_id === timedOut)).not.toHaveProperty("canceled_at");
    expect((await list("pending")).tasks.map((task) => task.task_id)).not.toContain(canceled);
  });

  it("shows canceled_at to a request without a key, as FFHub's clients read a task", async () => {
    const { key } = await createUser();
    const { task_id } = await (await submit(key)).json<{ task_id: string }>();
    await api(`/v1/tasks/${task_id}/cancel`, key, { method: "POST" });
    const body = await (await api(`/v1/tasks/${task_id}`, undefined)).json<{ status: string; error_code: string; canceled_at: string; finished_at: string }>();
    expect(body).toMatchObject({ status: "failed", error_code: "CANCELED" });
    expect(body.canceled_at).toBe(body.finished_at);
  });

  it("accepts status=succeeded (FFHub's CLI) as completed, and ignores a user_id parameter", async () => {
    const { key } = await createUser();
    const { task_id } = await (await submit(key)).json<{ task_id: string }>();
    await submit(key);
    await env.DB.prepare("UPDATE tasks SET status = 'completed', finished_at = ?, outputs = '[]' WHERE id = ?").bind(new Date().toISOString(), task_id).run();
    const response = await api("/v1/tasks?status=succeeded&user_id=someone-else", key);
    expect(response.status).toBe(200);
    const body = await response.json<{ total: number; tasks: { task_id: string; status: string }[] }>();
    expect(body.tasks.map((task) => [task.task_id, task.status])).toEqual([[task_id, "completed"]]);
  });

  it.each(["0x10", "1e1", " 5", "5.0", "-1", "0"])("refuses limit=%j: only decimal integers from 1 to 100", async (limit) => {
    const { key } = await createUser();
    await expectProblem(await api(`/v1/tasks?limit=${encodeURIComponent(limit)}`, key), 400, "VALIDATION_FAILED");
  });

  it("refuses an unknown status", async () => {
    const { key } = await createUser();
    await expectProblem(await api("/v1/tasks?status=done", key), 400, "VALIDATION_FAILED");
  });

  it("bounds limit to 100", async () => {
    const { key } = await createUser();
    const response = await api("/v1/tasks?limit=500", key);
    expect(response.status).toBe(400);
    expect((await response.json<{ code: string }>()).code).toBe("VALIDATION_FAILED");
  });
});

describe("POST /v1/tasks/validate", () => {
  it("returns the policy's verdict without creating a task", async () => {
    const { key } = await createUser();
    const ok = await postJson("/v1/tasks/validate", key, { command: COMMAND });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ valid: true, inputs: ["https://example.com/in.mp4"], outputs: ["out.mp4", "out.m4a"] });
    const bad = await postJson("/v1/tasks/validate", key, { command: "ffmpeg -i file:///etc/passwd out.mp4" });
    expect(bad.status).toBe(400);
    expect((await bad.json<{ code: string }>()).code).toBe("INPUT_NOT_ALLOWED");
    expect((await (await api("/v1/tasks", key)).json<{ total: number }>()).total).toBe(0);
  });
});
