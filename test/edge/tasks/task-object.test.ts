import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { findTaskById, insertTask } from "../../../edge/tasks/repository";
import { taskStub } from "../../../edge/lib/stubs";
import { createUser } from "../helpers";

async function newTask() {
  const { userId } = await createUser();
  const taskId = `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const createdAt = new Date().toISOString();
  await insertTask(env.DB, { id: taskId, user_id: userId, command: "-i https://example.com/a.mp4 out.mp4", with_metadata: 0, webhook_url: null, created_at: createdAt });
  const stub = taskStub(env, taskId);
  await stub.init({ task_id: taskId, user_id: userId, created_at: createdAt });
  return { taskId, userId, stub };
}

describe("TaskObject", () => {
  it("lets only one delivery claim a dispatch", async () => {
    const { stub } = await newTask();
    expect(await stub.claimDispatch()).toEqual({ ok: true });
    expect(await stub.claimDispatch()).toEqual({ ok: false, reason: "claimed" });
    await stub.markDispatched("http://t1");
    expect(await stub.claimDispatch()).toEqual({ ok: false, reason: "dispatched" });
  });

  it("lets a released claim be taken again", async () => {
    const { stub } = await newTask();
    await stub.claimDispatch();
    await stub.releaseDispatch();
    expect(await stub.claimDispatch()).toEqual({ ok: true });
  });

  it("writes running and end states to D1", async () => {
    const { stub, taskId } = await newTask();
    await stub.report({ type: "started", seq: 0 });
    expect((await findTaskById(env.DB, taskId))!.status).toBe("running");
    await stub.report({ type: "failed", seq: 1, error: "ffmpeg exited with code 1", error_code: "FFMPEG_FAILED" });
    const row = await findTaskById(env.DB, taskId);
    expect(row).toMatchObject({ status: "failed", error_code: "FFMPEG_FAILED", error: "ffmpeg exited with code 1" });
    expect(row!.finished_at).not.toBeNull();
  });

  it("fails a completed report whose outputs are not in R2", async () => {
    const { stub, taskId } = await newTask();
    await stub.report({ type: "started", seq: 0 });
    await stub.report({ type: "completed", seq: 1, outputs: [{ filename: "out.mp4", size: 10 }] });
    expect(await findTaskById(env.DB, taskId)).toMatchObject({ status: "failed", error_code: "OUTPUT_UPLOAD_FAILED" });
  });

  it("completes when every reported output is stored with its size", async () => {
    const { stub, taskId, userId } = await newTask();
    await env.FILES.put(`outputs/${userId}/${taskId}/out.mp4`, "0123456789");
    await stub.report({ type: "started", seq: 0 });
    await stub.report({ type: "completed", seq: 1, outputs: [{ filename: "out.mp4", size: 10 }] });
    const row = await findTaskById(env.DB, taskId);
    expect(row).toMatchObject({ status: "completed", progress: 100 });
    expect(JSON.parse(row!.outputs!)).toEqual([{ filename: "out.mp4", size: 10 }]);
  });

  it("answers cancel to reports about a task that already ended", async () => {
    const { stub } = await newTask();
    await stub.failTask("DISPATCH_FAILED", "gone");
    expect(await stub.report({ type: "progress", seq: 3, progress: 10 })).toEqual({ ok: true, cancel: true });
  });

  it("fails a running task whose transcoder went silent", async () => {
    const { stub, taskId } = await newTask();
    await stub.report({ type: "started", seq: 0 });
    await runInDurableObject(stub, async (_instance, state) => {
      const live = (await state.storage.get<{ heartbeat_at: string }>("state"))!;
      await state.storage.put("state", { ...live, heartbeat_at: new Date(Date.now() - 10 * 60_000).toISOString() });
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await findTaskById(env.DB, taskId)).toMatchObject({ status: "failed", error_code: "TRANSCODER_LOST" });
  });

  it("keeps a healthy running task alive through its alarm", async () => {
    const { stub, taskId } = await newTask();
    await stub.report({ type: "started", seq: 0 });
    await runDurableObjectAlarm(stub);
    expect((await findTaskById(env.DB, taskId))!.status).toBe("running");
  });
});
