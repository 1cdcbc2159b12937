import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { findTaskById } from "../../../edge/tasks/repository";
import { liveState } from "../../../edge/tasks/live-state";
import { type LiveState, MAX_RETRIES } from "../../../edge/tasks/state";
import { originUrl } from "../files/fixtures";
import { originPaths } from "../files/origin";
import { newTaskObject } from "../helpers";

describe("TaskObject", () => {
  it("lets only one delivery claim a dispatch", async () => {
    const { stub } = await newTaskObject();
    expect(await stub.claimDispatch()).toEqual({ ok: true, run: 0 });
    expect(await stub.claimDispatch()).toEqual({ ok: false, reason: "claimed" });
    await stub.markDispatched("http://t1", 0);
    expect(await stub.claimDispatch()).toEqual({ ok: false, reason: "dispatched" });
  });

  it("lets a claim be taken again once its task waits in line or found no transcoder", async () => {
    const { stub } = await newTaskObject();
    await stub.claimDispatch();
    await stub.markWaiting(0);
    expect(await stub.claimDispatch()).toEqual({ ok: true, run: 0 });
    await stub.markUnreachable(0);
    expect(await stub.claimDispatch()).toEqual({ ok: true, run: 0 });
  });

  it("writes running and end states to D1", async () => {
    const { stub, taskId } = await newTaskObject();
    await stub.report({ type: "started", seq: 0 });
    expect((await findTaskById(env.DB, taskId))!.status).toBe("running");
    await stub.report({ type: "failed", seq: 1, error: "ffmpeg exited with code 1", error_code: "FFMPEG_FAILED" });
    const row = await findTaskById(env.DB, taskId);
    expect(row).toMatchObject({ status: "failed", error_code: "FFMPEG_FAILED", error: "ffmpeg exited with code 1" });
    expect(row!.finished_at).not.toBeNull();
  });

  it("fails a completed report whose outputs are not in R2", async () => {
    const { stub, taskId } = await newTaskObject();
    await stub.report({ type: "started", seq: 0 });
    await stub.report({ type: "completed", seq: 1, outputs: [{ filename: "out.mp4", size: 10 }] });
    expect(await findTaskById(env.DB, taskId)).toMatchObject({ status: "failed", error_code: "OUTPUT_UPLOAD_FAILED" });
  });

  it("completes when every reported output is stored with its size", async () => {
    const { stub, taskId, userId } = await newTaskObject();
    await env.FILES.put(`outputs/${userId}/${taskId}/out.mp4`, "0123456789");
    await stub.report({ type: "started", seq: 0 });
    await stub.report({ type: "completed", seq: 1, outputs: [{ filename: "out.mp4", size: 10 }] });
    const row = await findTaskById(env.DB, taskId);
    expect(row).toMatchObject({ status: "completed", progress: 100 });
    expect(JSON.parse(row!.outputs!)).toEqual([{ filename: "out.mp4", size: 10 }]);
  });

  it("cancels a running task itself: ends it CANCELED, leaves a note as its log and tells its transcoder to stop", async () => {
    const { stub, taskId, userId } = await newTaskObject();
    const transcoder = `transcoder-${crypto.randomUUID()}`;
    await stub.claimDispatch();
    // A transcoder stand-in that records the requests it gets.
    await stub.markDispatched(originUrl(`/hook/${transcoder}`), 0);
    await stub.report({ type: "started", seq: 0 });
    const result = await stub.cancel();
    expect(result).toEqual({ canceled: true, state: expect.objectContaining({ status: "failed", error_code: "CANCELED" }) });
    expect(await (await env.FILES.get(`logs/${userId}/${taskId}.log`))!.text()).toContain("canceled at the user's request");
    let stops: { method?: string }[] = [];
    for (let attempt = 0; attempt < 50 && stops.length === 0; attempt++) {
      stops = await (await fetch(originUrl(originPaths.hookLog(transcoder)))).json();
      if (stops.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(stops).toEqual([expect.objectContaining({ method: "DELETE" })]);
    expect(await stub.cancel()).toEqual({ canceled: false, state: expect.objectContaining({ error_code: "CANCELED" }) });
  });

  it("answers cancel to reports about a task that already ended", async () => {
    const { stub } = await newTaskObject();
    await stub.failTask("DISPATCH_FAILED", "gone");
    expect(await stub.report({ type: "progress", seq: 3, progress: 10 })).toEqual({ ok: true, cancel: true });
  });

  it("starts a silent run again, counted on the task, and fails TRANSCODER_LOST after the last retry", async () => {
    const { stub, taskId } = await newTaskObject();
    // Silent past the heartbeat timeout and the window a finished run may take to report: given up without a probe.
    const silence = () => runInDurableObject(stub, async (_instance, state) => {
      const live = (await state.storage.get<LiveState>("state"))!;
      await state.storage.put("state", { ...live, heartbeat_at: new Date(Date.now() - 20 * 60_000).toISOString() });
    });
    for (let retry = 1; retry <= MAX_RETRIES; retry++) {
      await stub.claimDispatch();
      await stub.markDispatched("http://127.0.0.1:9", retry - 1);
      expect(await stub.report({ type: "started", seq: 0 }, retry - 1)).toEqual({ ok: true, cancel: false });
      await silence();
      expect(await runDurableObjectAlarm(stub)).toBe(true);
      expect(await findTaskById(env.DB, taskId)).toMatchObject({ status: "pending", retries: retry, started_at: null });
      expect(await stub.getState()).toMatchObject({ status: "pending", retries: retry, dispatch: "queued", dispatch_target: null });
    }
    await stub.claimDispatch();
    await stub.markDispatched("http://127.0.0.1:9", MAX_RETRIES);
    await stub.report({ type: "started", seq: 0 }, MAX_RETRIES);
    await silence();
    await runDurableObjectAlarm(stub);
    expect(await findTaskById(env.DB, taskId)).toMatchObject({ status: "failed", error_code: "TRANSCODER_LOST", retries: MAX_RETRIES });
  });

  it("tells a run that was given up to stop, and ignores its reports", async () => {
    const { stub, taskId } = await newTaskObject();
    await stub.report({ type: "started", seq: 0 }, 0);
    await stub.report({ type: "failed", seq: 1, error: "The transcoder shut down.", error_code: "TRANSCODER_LOST" }, 0);
    expect(await stub.getState()).toMatchObject({ status: "pending", retries: 1 });
    expect(await stub.report({ type: "progress", seq: 2, progress: 50 }, 0)).toEqual({ ok: true, cancel: true });
    expect((await findTaskById(env.DB, taskId))!.status).toBe("pending");
  });

  it("queues its job again when the message was lost", async () => {
    const { stub, taskId } = await newTaskObject();
    await runInDurableObject(stub, async (_instance, state) => {
      const live = (await state.storage.get<LiveState>("state"))!;
      await state.storage.put("state", { ...live, resend_at: new Date(Date.now() - 1000).toISOString() });
    });
    const before = Date.now();
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const state = (await liveState(env, taskId))!;
    expect(state.dispatch).toBe("queued");
    expect(Date.parse(state.resend_at)).toBeGreaterThan(before);
  });

  it("gives up a run at once when its transcoder is gone", async () => {
    const { stub, taskId } = await newTaskObject();
    await stub.claimDispatch();
    // Nothing listens on port 9: the probe finds the transcoder gone.
    await stub.markDispatched("http://127.0.0.1:9", 0);
    await stub.report({ type: "started", seq: 0 });
    await runInDurableObject(stub, async (_instance, state) => {
      const live = (await state.storage.get<LiveState>("state"))!;
      await state.storage.put("state", { ...live, heartbeat_at: new Date(Date.now() - 20_000).toISOString() });
    });
    await runDurableObjectAlarm(stub);
    expect(await findTaskById(env.DB, taskId)).toMatchObject({ status: "pending", retries: 1 });
  });

  it("holds progress reports in memory between writes, where polls see them, and writes them with the next change or on its alarm", async () => {
    const stored = (stub: Awaited<ReturnType<typeof newTaskObject>>["stub"]) => runInDurableObject(stub, (_object, state) => state.storage.get<LiveState>("state"));
    const { stub, taskId } = await newTaskObject();
    await stub.report({ type: "started", seq: 0 });
    await stub.report({ type: "progress", seq: 1, progress: 10 });
    await stub.report({ type: "progress", seq: 2, progress: 20 });
    // A poll sees the latest report; the storage still has the state of the last write.
    expect((await liveState(env, taskId))!.progress).toBe(20);
    expect((await stored(stub))!.progress).toBe(0);
    await runDurableObjectAlarm(stub);
    expect((await stored(stub))!.progress).toBe(20);
    await stub.report({ type: "progress", seq: 3, progress: 30 });
    await stub.report({ type: "completed", seq: 4, outputs: [] });
    expect(await stored(stub)).toMatchObject({ status: "completed", progress: 100, last_seq: 4 });
    expect((await findTaskById(env.DB, taskId))!.status).toBe("completed");
  });

  it("keeps a healthy running task alive through its alarm", async () => {
    const { stub, taskId } = await newTaskObject();
    await stub.report({ type: "started", seq: 0 });
    await runDurableObjectAlarm(stub);
    expect((await findTaskById(env.DB, taskId))!.status).toBe("running");
  });
});
