import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../../edge/lib/stubs";
import { logKey } from "../../../edge/tasks/outputs";
import { api, createUser, postJson } from "../helpers";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -t 2 out.mp4";

async function newTask(key: string): Promise<string> {
  return ((await (await postJson("/v1/tasks", key, { command: COMMAND })).json()) as { task_id: string }).task_id;
}

async function readEvents(response: Response): Promise<{ event: string; data: Record<string, unknown> }[]> {
  const text = await response.text();
  return text.split("\n\n").filter((block) => block.startsWith("event:")).map((block) => {
    const [eventLine, dataLine] = block.split("\n");
    return { event: eventLine!.slice("event: ".length), data: JSON.parse(dataLine!.slice("data: ".length)) };
  });
}

describe("POST /v1/tasks/{id}/cancel", () => {
  it("ends a pending task failed with CANCELED so it never starts", async () => {
    const { key } = await createUser();
    const taskId = await newTask(key);
    const response = await api(`/v1/tasks/${taskId}/cancel`, key, { method: "POST" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ task_id: taskId, status: "failed", error_code: "CANCELED" });
    expect(await taskStub(env, taskId).claimDispatch()).toEqual({ ok: false, reason: "final" });
  });

  it("marks the task canceled_at its end and leaves a log saying it never ran, for a task canceled before it started", async () => {
    const { key } = await createUser();
    const taskId = await newTask(key);
    const canceled = await (await api(`/v1/tasks/${taskId}/cancel`, key, { method: "POST" })).json<{ canceled_at: string; finished_at: string; started_at: string | null }>();
    expect(canceled.canceled_at).toBe(canceled.finished_at);
    expect(canceled.started_at).toBeNull();
    expect(await (await api(`/v1/tasks/${taskId}`, key)).json()).toMatchObject({ status: "failed", error_code: "CANCELED", canceled_at: canceled.finished_at });
    const log = await api(`/v1/tasks/${taskId}/logs`, key);
    expect(log.status).toBe(200);
    expect(await log.text()).toBe("[ffedge] The task was canceled before it started; ffmpeg never ran.\n");
  });

  it("leaves a log saying ffmpeg wrote nothing for a running task, until the transcoder sends ffmpeg's own", async () => {
    const { key } = await createUser();
    const taskId = await newTask(key);
    await taskStub(env, taskId).report({ type: "started", seq: 0 });
    expect((await api(`/v1/tasks/${taskId}/cancel`, key, { method: "POST" })).status).toBe(200);
    expect(await (await api(`/v1/tasks/${taskId}/logs`, key)).text()).toMatch(/^\[ffedge\] The task was canceled at the user's request before ffmpeg wrote anything\.\n$/);
  });

  it("keeps a log ffmpeg's run stored just before the cancel", async () => {
    const { key, userId } = await createUser();
    const taskId = await newTask(key);
    await taskStub(env, taskId).report({ type: "started", seq: 0 });
    await env.FILES.put(logKey(userId, taskId), "frame=  10 fps=0.0\n");
    expect((await api(`/v1/tasks/${taskId}/cancel`, key, { method: "POST" })).status).toBe(200);
    expect(await (await api(`/v1/tasks/${taskId}/logs`, key)).text()).toBe("frame=  10 fps=0.0\n");
  });

  it("answers 409 for a task that has already finished", async () => {
    const { key } = await createUser();
    const taskId = await newTask(key);
    await api(`/v1/tasks/${taskId}/cancel`, key, { method: "POST" });
    const again = await api(`/v1/tasks/${taskId}/cancel`, key, { method: "POST" });
    expect(again.status).toBe(409);
    expect((await again.json<{ code: string }>()).code).toBe("TASK_NOT_RUNNABLE");
  });

  it("returns 404 for another user's task", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const taskId = await newTask(alice.key);
    expect((await api(`/v1/tasks/${taskId}/cancel`, bob.key, { method: "POST" })).status).toBe(404);
  });
});

describe("GET /v1/tasks/{id}/events", () => {
  it("streams the current state, every progress change and the final state, then closes", async () => {
    const { key } = await createUser();
    const taskId = await newTask(key);
    const response = await api(`/v1/tasks/${taskId}/events`, key);
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const task = taskStub(env, taskId);
    await task.report({ type: "started", seq: 100 });
    await task.report({ type: "progress", seq: 101, progress: 20.5 });
    await task.report({ type: "progress", seq: 102, progress: 20.9 });
    await task.report({ type: "progress", seq: 103, progress: 60 });
    await task.report({ type: "failed", seq: 104, error: "boom", error_code: "FFMPEG_FAILED" });
    const events = await readEvents(response);
    expect(events.map((e) => e.event)).toEqual(["status", "status", "progress", "progress", "failed"]);
    expect(events.map((e) => e.data.progress)).toEqual([0, 0, 20, 60, 60]);
    expect(events.at(-1)!.data).toMatchObject({ status: "failed", error_code: "FFMPEG_FAILED" });
  });

  it("serves several watchers at once", async () => {
    const { key } = await createUser();
    const taskId = await newTask(key);
    const first = await api(`/v1/tasks/${taskId}/events`, key);
    const second = await api(`/v1/tasks/${taskId}/events`, key);
    await taskStub(env, taskId).failTask("CANCELED", "stop");
    expect((await readEvents(first)).at(-1)!.event).toBe("failed");
    expect((await readEvents(second)).at(-1)!.event).toBe("failed");
  });

  it("says canceled_at in the final event of a canceled task, and nothing of it for another failure", async () => {
    const { key } = await createUser();
    const canceled = await newTask(key);
    const watching = await api(`/v1/tasks/${canceled}/events`, key);
    await api(`/v1/tasks/${canceled}/cancel`, key, { method: "POST" });
    const last = (await readEvents(watching)).at(-1)!;
    expect(last.data).toMatchObject({ status: "failed", error_code: "CANCELED", canceled_at: last.data.finished_at });
    const failed = await newTask(key);
    await taskStub(env, failed).failTask("TIMEOUT", "too long");
    expect((await readEvents(await api(`/v1/tasks/${failed}/events`, key)))[0]!.data).not.toHaveProperty("canceled_at");
  });

  it("sends one event and closes for a task that has ended", async () => {
    const { key } = await createUser();
    const taskId = await newTask(key);
    await taskStub(env, taskId).failTask("CANCELED", "stop");
    const events = await readEvents(await api(`/v1/tasks/${taskId}/events`, key));
    expect(events).toHaveLength(1);
    expect(events[0]!.data.status).toBe("failed");
  });

  it("returns 404 for another user's task", async () => {
    const alice = await createUser();
    const bob = await createUser();
    expect((await api(`/v1/tasks/${await newTask(alice.key)}/events`, bob.key)).status).toBe(404);
  });

  it("ends a watcher's stream once its API key is revoked, although the task goes on", async () => {
    const { key, userId } = await createUser();
    const taskId = await newTask(key);
    const response = await api(`/v1/tasks/${taskId}/events`, key);
    expect(response.status).toBe(200);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE user_id = ?").bind(new Date().toISOString(), userId).run();
    const events = await readEvents(response);
    expect(events.map((e) => e.event)).not.toContain("failed");
    expect(events.map((e) => e.event)).not.toContain("completed");
    // The task itself is untouched (read by id, as FFHub's clients do, now that the key is gone).
    expect(["pending", "running"]).toContain((await (await api(`/v1/tasks/${taskId}`, undefined)).json<{ status: string }>()).status);
  });
});

describe("GET /v1/tasks/{id}/logs", () => {
  it("returns ffmpeg's stderr once stored, and 404 before", async () => {
    const { key, userId } = await createUser();
    const taskId = await newTask(key);
    expect((await api(`/v1/tasks/${taskId}/logs`, key)).status).toBe(404);
    await env.FILES.put(logKey(userId, taskId), "frame=  10 fps=0.0\nError: nope\n");
    const response = await api(`/v1/tasks/${taskId}/logs`, key);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await response.text()).toContain("Error: nope");
  });
});

describe("DELETE /v1/tasks/{id}", () => {
  it("removes a finished task, its outputs and its log", async () => {
    const { key, userId } = await createUser();
    const taskId = await newTask(key);
    await env.FILES.put(`outputs/${userId}/${taskId}/out.mp4`, "abc", { customMetadata: { expires_at: new Date(Date.now() + 60_000).toISOString() } });
    await env.FILES.put(logKey(userId, taskId), "log");
    const task = taskStub(env, taskId);
    await task.report({ type: "started", seq: 100 });
    await task.report({ type: "completed", seq: 101, outputs: [{ filename: "out.mp4", size: 3 }] });
    expect((await api(`/v1/tasks/${taskId}`, key, { method: "DELETE" })).status).toBe(204);
    expect((await api(`/v1/tasks/${taskId}`, key)).status).toBe(404);
    expect(await env.FILES.head(`outputs/${userId}/${taskId}/out.mp4`)).toBeNull();
    expect(await env.FILES.head(logKey(userId, taskId))).toBeNull();
    expect((await api(`/outputs/${userId}/${taskId}/out.mp4`, undefined)).status).toBe(404);
  });

  it("refuses a task that has not finished with 409", async () => {
    const { key } = await createUser();
    const taskId = await newTask(key);
    const response = await api(`/v1/tasks/${taskId}`, key, { method: "DELETE" });
    expect(response.status).toBe(409);
    expect((await response.json<{ code: string }>()).code).toBe("TASK_NOT_FINISHED");
  });

  it("returns 404 for another user's task", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const taskId = await newTask(alice.key);
    await taskStub(env, taskId).failTask("CANCELED", "stop");
    expect((await api(`/v1/tasks/${taskId}`, bob.key, { method: "DELETE" })).status).toBe(404);
  });
});

describe("eta_seconds", () => {
  it("is reported for a running task with progress", async () => {
    const { key } = await createUser();
    const taskId = await newTask(key);
    const task = taskStub(env, taskId);
    await task.report({ type: "started", seq: 100 });
    await task.report({ type: "progress", seq: 101, progress: 50 });
    const body = await (await api(`/v1/tasks/${taskId}`, key)).json<{ eta_seconds?: number }>();
    expect(typeof body.eta_seconds).toBe("number");
    expect(body.eta_seconds).toBeGreaterThanOrEqual(0);
  });
});

describe("GET /v1/me usage", () => {
  it("reports tasks today, bytes stored and the running-task cap", async () => {
    const { key } = await createUser();
    await newTask(key);
    await postJson("/api/upload/base64", key, { data: `data:text/plain;base64,${btoa("12345")}` });
    type Usage = { usage: { running_tasks: number; waiting_tasks: number } };
    const me = await (await api("/v1/me", key)).json<Usage>();
    expect(me.usage).toMatchObject({ tasks_today: 1, bytes_stored: 5, max_running_tasks: 5, rate_limit: { requests: 200, period_seconds: 10 } });
    // The task joins its user's dispatch line when the queue consumer takes its job, moments after the submission.
    const deadline = Date.now() + 10_000;
    let counted = 0;
    while (counted !== 1 && Date.now() < deadline) {
      const { usage } = await (await api("/v1/me", key)).json<Usage>();
      counted = usage.running_tasks + usage.waiting_tasks;
      if (counted !== 1) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(counted).toBe(1);
  });
});
