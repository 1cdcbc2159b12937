import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signToken } from "../../../edge/lib/signed-token";
import { api, createUser, fakeMp4, postJson } from "../helpers";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -t 2 out.mp4";

/** A task started on a transcoder, with the callback token the dispatcher gave it. */
async function runningTask(): Promise<{ taskId: string; key: string; userId: string; token: string }> {
  const { key, userId } = await createUser();
  const { task_id: taskId } = await (await postJson("/v1/tasks", key, { command: COMMAND })).json<{ task_id: string }>();
  const token = await signToken(env.SIGNING_SECRET, "callback", { t: taskId, r: 0, u: userId }, 3600);
  const started = await report(taskId, token, { type: "started", seq: 0 });
  expect(started.status, await started.clone().text()).toBe(200);
  return { taskId, key, userId, token };
}

function report(taskId: string, token: string, event: Record<string, unknown>): Promise<Response> {
  return postJson(`/internal/tasks/${taskId}/events`, token, event);
}

/** An output stored as the transcoder stores it near the end of its work. */
async function storeOutput(taskId: string, token: string, filename = "out.mp4"): Promise<Response> {
  const body = fakeMp4(2048);
  return api(`/internal/tasks/${taskId}/outputs/${filename}`, token, { method: "PUT", headers: { "content-type": "video/mp4", "content-length": String(body.byteLength) }, body });
}

/** Where the task's outputs could still be seen: R2, the files list, the CDN and the storage count. */
async function traces(task: { taskId: string; key: string; userId: string }) {
  const stored = await env.FILES.list({ prefix: `outputs/${task.userId}/${task.taskId}/` });
  const listed = await (await api("/api/files", task.key)).json<{ files: { key: string }[] }>();
  const served = await api(`/outputs/${task.userId}/${task.taskId}/out.mp4`, undefined);
  await served.body?.cancel();
  const me = await (await api("/v1/me", task.key)).json<{ usage: { bytes_stored: number } }>();
  return { inR2: stored.objects.length, listed: listed.files.filter((file) => file.key.includes(task.taskId)).length, served: served.status, bytes: me.usage.bytes_stored };
}

describe("outputs of a task that did not complete", () => {
  it("are neither listed, served, counted nor kept once the task is canceled after they were stored (cancel at 99 %)", async () => {
    const task = await runningTask();
    expect((await storeOutput(task.taskId, task.token)).status).toBe(201);
    expect(await traces(task)).toMatchObject({ inR2: 1, listed: 1, served: 200 });
    expect((await api(`/v1/tasks/${task.taskId}/cancel`, task.key, { method: "POST" })).status).toBe(200);
    expect(await traces(task)).toEqual({ inR2: 0, listed: 0, served: 404, bytes: 0 });
    // The transcoder's completed report arrives after the cancel: it is told to stop and changes nothing.
    const late = await report(task.taskId, task.token, { type: "completed", seq: 1, outputs: [{ filename: "out.mp4", size: 2048 }] });
    expect(await late.json()).toMatchObject({ cancel: true });
    expect(await traces(task)).toEqual({ inR2: 0, listed: 0, served: 404, bytes: 0 });
  });

  it("are discarded whenever the task ends failed, not only by a cancel", async () => {
    const task = await runningTask();
    expect((await storeOutput(task.taskId, task.token)).status).toBe(201);
    await report(task.taskId, task.token, { type: "failed", seq: 1, error: "The job ran longer than its limit of 600 s and was stopped.", error_code: "TIMEOUT" });
    expect(await traces(task)).toEqual({ inR2: 0, listed: 0, served: 404, bytes: 0 });
  });

  it("cannot be stored once the task was canceled", async () => {
    const task = await runningTask();
    expect((await api(`/v1/tasks/${task.taskId}/cancel`, task.key, { method: "POST" })).status).toBe(200);
    expect((await storeOutput(task.taskId, task.token)).status).toBe(409);
    expect(await traces(task)).toEqual({ inR2: 0, listed: 0, served: 404, bytes: 0 });
  });
});

describe("the late final report of a canceled, then deleted task", () => {
  it.each(["completed", "failed"] as const)("leaves no log in R2 (%s report)", async (type) => {
    const task = await runningTask();
    expect((await api(`/v1/tasks/${task.taskId}/cancel`, task.key, { method: "POST" })).status).toBe(200);
    expect((await api(`/v1/tasks/${task.taskId}`, task.key, { method: "DELETE" })).status).toBe(204);
    const end = type === "completed"
      ? { type, seq: 1, outputs: [{ filename: "out.mp4", size: 2048 }], log: "frame=  50 fps=0.0" }
      : { type, seq: 1, error: "ffmpeg was killed by SIGKILL.", error_code: "FFMPEG_FAILED", log: "frame=  50 fps=0.0" };
    const late = await report(task.taskId, task.token, end);
    expect(await late.json()).toMatchObject({ cancel: true });
    expect((await env.FILES.list({ prefix: `logs/${task.userId}/` })).objects).toEqual([]);
    expect((await env.FILES.list({ prefix: `outputs/${task.userId}/` })).objects).toEqual([]);
  });

  it("keeps the log of a canceled task that still exists, for its owner, until the task is deleted", async () => {
    const task = await runningTask();
    expect((await api(`/v1/tasks/${task.taskId}/cancel`, task.key, { method: "POST" })).status).toBe(200);
    await report(task.taskId, task.token, { type: "failed", seq: 1, error: "ffmpeg was killed by SIGTERM.", error_code: "FFMPEG_FAILED", log: "frame=  50 fps=0.0" });
    expect(await (await api(`/v1/tasks/${task.taskId}/logs`, task.key)).text()).toBe("frame=  50 fps=0.0");
    expect((await api(`/v1/tasks/${task.taskId}`, task.key, { method: "DELETE" })).status).toBe(204);
    expect((await env.FILES.list({ prefix: `logs/${task.userId}/` })).objects).toEqual([]);
  });
});

describe("an output object left in R2 after the task ended", () => {
  // An output PUT whose row is refused deletes its object, but a Worker that stops between the
  // R2 put and that delete leaves the object behind, with no row.
  const landsInR2 = (task: { taskId: string; userId: string }) => env.FILES.put(`outputs/${task.userId}/${task.taskId}/out.mp4`, fakeMp4(2048));

  it("is deleted when the run's last report comes, the task having been canceled", async () => {
    const task = await runningTask();
    expect((await api(`/v1/tasks/${task.taskId}/cancel`, task.key, { method: "POST" })).status).toBe(200);
    await landsInR2(task);
    await report(task.taskId, task.token, { type: "failed", seq: 1, error: "ffmpeg was killed by SIGTERM.", error_code: "FFMPEG_FAILED" });
    expect(await traces(task)).toEqual({ inR2: 0, listed: 0, served: 404, bytes: 0 });
  });

  it("is deleted when the run's last report comes, the task having been canceled and deleted", async () => {
    const task = await runningTask();
    expect((await api(`/v1/tasks/${task.taskId}/cancel`, task.key, { method: "POST" })).status).toBe(200);
    expect((await api(`/v1/tasks/${task.taskId}`, task.key, { method: "DELETE" })).status).toBe(204);
    await landsInR2(task);
    await report(task.taskId, task.token, { type: "completed", seq: 1, outputs: [{ filename: "out.mp4", size: 2048 }] });
    expect((await env.FILES.list({ prefix: `outputs/${task.userId}/` })).objects).toEqual([]);
  });

  it("is kept for a task that completed: a duplicate last report deletes nothing", async () => {
    const task = await runningTask();
    expect((await storeOutput(task.taskId, task.token)).status).toBe(201);
    const end = { type: "completed", seq: 1, outputs: [{ filename: "out.mp4", size: 2048 }] };
    expect(await (await report(task.taskId, task.token, end)).json()).toEqual({ ok: true, cancel: false });
    expect(await (await report(task.taskId, task.token, end)).json()).toMatchObject({ ok: true });
    expect(await traces(task)).toMatchObject({ inR2: 1, listed: 1, served: 200 });
  });
});
