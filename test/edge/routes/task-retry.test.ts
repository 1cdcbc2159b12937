import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { findTaskById, insertTask, markFinished, markRunning } from "../../../edge/tasks/repository";
import { expectProblem } from "../../helpers/problems";
import { api, createUser, fakeMp4, postJson, uploadFile } from "../helpers";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -c:v libx264 -t 2 out.mp4";

/** A task of the user in the given state, straight into D1, as submissions and the end path leave it. */
async function seedTask(userId: string, end: { status: "pending" | "running" | "completed" | "failed"; command?: string; error_code?: "TIMEOUT" | "FFMPEG_FAILED" }): Promise<string> {
  const id = `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const now = new Date().toISOString();
  await insertTask(env.DB, { id, user_id: userId, command: end.command ?? COMMAND, with_metadata: 1, webhook_url: "https://hooks.example.com/ffedge", created_at: now });
  await env.DB.prepare("UPDATE tasks SET time_limit_seconds = 120 WHERE id = ?").bind(id).run();
  if (end.status !== "pending") await markRunning(env.DB, id, now);
  if (end.status === "completed" || end.status === "failed") {
    const failed = end.status === "failed";
    await markFinished(env.DB, id, { status: end.status, progress: failed ? 40 : 100, outputs: failed ? null : [], error: failed ? "ffmpeg exited with 1" : null, error_code: failed ? (end.error_code ?? "FFMPEG_FAILED") : null, started_at: now, finished_at: now });
  }
  return id;
}

function retry(key: string, taskId: string, idempotencyKey?: string): Promise<Response> {
  return api(`/v1/tasks/${taskId}/retry`, key, { method: "POST", headers: idempotencyKey ? { "idempotency-key": idempotencyKey } : {} });
}

describe("POST /v1/tasks/{task_id}/retry", () => {
  it.each(["completed", "failed"] as const)("runs a %s task again as a new pending task with its command, metadata choice, webhook and time limit", async (status) => {
    const { key, userId } = await createUser();
    const old = await seedTask(userId, { status });
    const response = await retry(key, old);
    expect(response.status).toBe(201);
    const task = await response.json<{ task_id: string; status: string; retry_of: string; created_at: string }>();
    expect(task).toMatchObject({ status: "pending", retry_of: old });
    expect(task.task_id).not.toBe(old);
    expect(response.headers.get("location")).toBe(`/v1/tasks/${task.task_id}`);
    expect(await findTaskById(env.DB, task.task_id)).toMatchObject({ user_id: userId, status: "pending", command: COMMAND, with_metadata: 1, webhook_url: "https://hooks.example.com/ffedge", time_limit_seconds: 120 });
    expect(await findTaskById(env.DB, old)).toMatchObject({ status });
    const read = await (await api(`/v1/tasks/${task.task_id}`, key)).json<{ status: string; command: string }>();
    expect(read).toMatchObject({ status: "pending", command: COMMAND });
  });

  it("shows retry_of when the new task is read and listed, and never on the task it retried", async () => {
    const { key, userId } = await createUser();
    const old = await seedTask(userId, { status: "failed" });
    const { task_id: retried } = await (await retry(key, old)).json<{ task_id: string }>();
    expect(await (await api(`/v1/tasks/${retried}`, key)).json()).toMatchObject({ task_id: retried, retry_of: old });
    expect(await (await api(`/v1/tasks/${old}`, key)).json()).not.toHaveProperty("retry_of");
    const listed = await (await api("/v1/tasks", key)).json<{ tasks: { task_id: string; retry_of?: string }[] }>();
    expect(new Map(listed.tasks.map((task) => [task.task_id, task.retry_of]))).toEqual(new Map([[retried, old], [old, undefined]]));
    // A request without a key sees no more than before.
    expect(await (await api(`/v1/tasks/${retried}`, undefined)).json()).not.toHaveProperty("retry_of");
  });

  it("runs a chained task again as the same chain of steps", async () => {
    const { key } = await createUser();
    const steps = [{ command: "ffmpeg -i https://example.com/in.mp4 -t 2 clip.mp4", publish: false }, { command: "ffmpeg -i {{steps.0.outputs.clip.mp4}} -vf scale=160:-2 small.mp4" }];
    const { task_id } = await (await postJson("/v1/tasks", key, { steps })).json<{ task_id: string }>();
    expect((await api(`/v1/tasks/${task_id}/cancel`, key, { method: "POST" })).status).toBe(200);
    const response = await retry(key, task_id);
    expect(response.status).toBe(201);
    const { task_id: retried } = await response.json<{ task_id: string }>();
    const read = await (await api(`/v1/tasks/${retried}`, key)).json<{ steps: { command: string; publish: boolean }[] }>();
    expect(read.steps.map(({ command, publish }) => ({ command, publish }))).toEqual([{ ...steps[0] }, { ...steps[1], publish: true }]);
  });

  it("retries a canceled task", async () => {
    const { key } = await createUser();
    const { task_id } = await (await postJson("/v1/tasks", key, { command: COMMAND })).json<{ task_id: string }>();
    expect((await api(`/v1/tasks/${task_id}/cancel`, key, { method: "POST" })).status).toBe(200);
    expect((await retry(key, task_id)).status).toBe(201);
  });

  it("gives a task that failed TIMEOUT the default time limit rather than the one it ran out of", async () => {
    const { key, userId } = await createUser();
    const old = await seedTask(userId, { status: "failed", error_code: "TIMEOUT" });
    const { task_id } = await (await retry(key, old)).json<{ task_id: string }>();
    expect((await findTaskById(env.DB, task_id))?.time_limit_seconds).toBe(600);
  });

  it.each(["pending", "running"] as const)("refuses a %s task with 409 TASK_NOT_FINISHED and creates nothing", async (status) => {
    const { key, userId } = await createUser();
    const old = await seedTask(userId, { status });
    const problem = await expectProblem(await retry(key, old), 409, "TASK_NOT_FINISHED");
    expect(problem.detail).toContain(status);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE user_id = ?").bind(userId).first<number>("n")).toBe(1);
  });

  it("answers 404 for another user's task, as for a missing one", async () => {
    const owner = await createUser();
    const stranger = await createUser();
    const old = await seedTask(owner.userId, { status: "completed" });
    await expectProblem(await retry(stranger.key, old), 404, "NOT_FOUND");
    await expectProblem(await retry(stranger.key, "tsk_doesnotexist"), 404, "NOT_FOUND");
  });

  it("requires an API key", async () => {
    const { userId } = await createUser();
    await expectProblem(await api(`/v1/tasks/${await seedTask(userId, { status: "completed" })}/retry`, undefined, { method: "POST" }), 401, "UNAUTHORIZED");
  });

  it("retries a task whose input is one of our uploads while it is served", async () => {
    const { key, userId } = await createUser();
    const upload = await (await uploadFile(key, fakeMp4())).json<{ cn_url: string }>();
    const old = await seedTask(userId, { status: "completed", command: `ffmpeg -i ${upload.cn_url} -t 1 out.mp4` });
    expect((await retry(key, old)).status).toBe(201);
  });

  it("refuses with 409 INPUT_EXPIRED naming the input when an upload the task read was deleted", async () => {
    const { key, userId } = await createUser();
    const upload = await (await uploadFile(key, fakeMp4())).json<{ cn_url: string; key: string }>();
    const old = await seedTask(userId, { status: "failed", command: `ffmpeg -i https://example.com/other.mp4 -i ${upload.cn_url} out.mp4` });
    expect((await api(`/api/files/${upload.key}`, key, { method: "DELETE" })).status).toBeLessThan(300);
    const problem = await expectProblem(await retry(key, old), 409, "INPUT_EXPIRED");
    expect(problem).toMatchObject({ input: upload.cn_url });
    expect(problem.detail).toContain(upload.cn_url);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE user_id = ?").bind(userId).first<number>("n")).toBe(1);
  });

  it("refuses with 409 INPUT_EXPIRED when an upload has expired but R2 still holds it", async () => {
    const { key, userId } = await createUser();
    const objectKey = `uploads/${userId}/${"e".repeat(32)}.mp4`;
    const past = new Date(Date.now() - 60_000).toISOString();
    await env.FILES.put(objectKey, fakeMp4(), { customMetadata: { user_id: userId, expires_at: past } });
    const url = `http://127.0.0.1:8787/${objectKey}`;
    const old = await seedTask(userId, { status: "completed", command: `ffmpeg -i ${url} -t 1 out.mp4` });
    expect(await expectProblem(await retry(key, old), 409, "INPUT_EXPIRED")).toMatchObject({ input: url });
  });

  it("answers a repeat with the same Idempotency-Key with the same new task", async () => {
    const { key, userId } = await createUser();
    const old = await seedTask(userId, { status: "completed" });
    const first = await (await retry(key, old, "retry-once")).json<{ task_id: string }>();
    const again = await retry(key, old, "retry-once");
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(first);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE user_id = ?").bind(userId).first<number>("n")).toBe(2);
  });
});
