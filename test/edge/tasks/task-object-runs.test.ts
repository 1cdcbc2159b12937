import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { findTaskById } from "../../../edge/tasks/repository";
import { newTaskObject } from "../helpers";

async function runningTask() {
  const { taskId, stub } = await newTaskObject();
  await stub.claimDispatch();
  await stub.markDispatched("http://127.0.0.1:9", 0);
  await stub.report({ type: "started", seq: 0 }, 0);
  return { taskId, stub };
}

describe("TaskObject and a transcoder that shuts down", () => {
  it("starts a handed-back task again at once as its next run, not failed, and tells the old run to stop", async () => {
    const { taskId, stub } = await runningTask();
    expect(await stub.report({ type: "handed_back", seq: 1, reason: "The transcoder shut down." }, 0)).toEqual({ ok: true, cancel: false });
    expect(await stub.getState()).toMatchObject({ status: "pending", dispatch: "queued", retries: 1, handed_back: 1, error_code: null });
    expect(await findTaskById(env.DB, taskId)).toMatchObject({ status: "pending", retries: 1 });
    // The next run is claimed with its own number; the old one's late reports are turned away.
    expect(await stub.claimDispatch()).toEqual({ ok: true, run: 1 });
    expect(await stub.report({ type: "progress", seq: 2, progress: 50 }, 0)).toEqual({ ok: true, cancel: true });
  });
});

describe("TaskObject and late answers to a dispatch", () => {
  it("lets a dispatch answer for a given-up run act on nothing once a newer run is claimed", async () => {
    const { stub } = await runningTask();
    await stub.report({ type: "handed_back", seq: 1, reason: "The transcoder shut down." }, 0);
    expect(await stub.claimDispatch()).toEqual({ ok: true, run: 1 });
    await stub.markDispatched("http://old-run", 0);
    await stub.markUnreachable(0);
    expect(await stub.getState()).toMatchObject({ dispatch: "claimed", retries: 1, dispatch_target: null, unreachable: 0 });
    await stub.markDispatched("http://new-run", 1);
    expect(await stub.getState()).toMatchObject({ dispatch: "dispatched", retries: 1, dispatch_target: "http://new-run" });
  });
});
