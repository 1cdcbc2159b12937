import { createExecutionContext, createMessageBatch, env, getQueueResult, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { dispatchJobs } from "../../../edge/queue/dispatch-jobs";
import { findTaskById, insertTask } from "../../../edge/tasks/repository";
import { liveState, taskStub } from "../../../edge/lib/stubs";
import type { LiveState } from "../../../edge/tasks/state";
import { createUser } from "../helpers";

async function newTask() {
  const { userId } = await createUser();
  const taskId = `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const createdAt = new Date().toISOString();
  await insertTask(env.DB, { id: taskId, user_id: userId, command: "-i https://example.com/a.mp4 out.mp4", with_metadata: 0, webhook_url: null, created_at: createdAt });
  await taskStub(env, taskId).init({ task_id: taskId, user_id: userId, created_at: createdAt });
  return taskId;
}

async function deliver(body: unknown, attempts = 1) {
  const batch = createMessageBatch("ffedge-jobs", [{ id: crypto.randomUUID(), timestamp: new Date(), attempts, body }]);
  const ctx = createExecutionContext();
  await dispatchJobs(batch, env);
  return getQueueResult(batch, ctx);
}

async function live(taskId: string): Promise<LiveState> {
  return (await liveState(env, taskId))!;
}

describe("jobs queue consumer", () => {
  it("acknowledges when no transcoder answers and leaves the retry to the task, a few seconds later", async () => {
    const taskId = await newTask();
    const before = Date.now();
    const result = await deliver({ task_id: taskId });
    expect(result.explicitAcks).toHaveLength(1);
    expect(result.retryMessages).toEqual([]);
    const state = await live(taskId);
    expect(state).toMatchObject({ status: "pending", dispatch: "queued", unreachable: 1 });
    expect(Date.parse(state.resend_at) - before).toBeLessThanOrEqual(5_000);
    await runInDurableObject(taskStub(env, taskId), async (_instance, storage) => {
      expect(await storage.storage.getAlarm()).toBe(Date.parse(state.resend_at));
    });
    expect(await taskStub(env, taskId).claimDispatch()).toEqual({ ok: true, run: 0 });
  });

  it("never fails or dead-letters a task because its message was delivered many times", async () => {
    const taskId = await newTask();
    const result = await deliver({ task_id: taskId }, 10);
    expect(result.explicitAcks).toHaveLength(1);
    expect(result.retryMessages).toEqual([]);
    expect((await findTaskById(env.DB, taskId))!.status).toBe("pending");
  });

  it("acknowledges a redelivered job whose task was already dispatched, without dispatching again", async () => {
    const taskId = await newTask();
    const stub = taskStub(env, taskId);
    await stub.claimDispatch();
    await stub.markDispatched("http://127.0.0.1:8788");
    const result = await deliver({ task_id: taskId });
    expect(result.explicitAcks).toHaveLength(1);
    expect(await live(taskId)).toMatchObject({ dispatch: "dispatched", dispatch_target: "http://127.0.0.1:8788" });
  });

  it("acknowledges a duplicate of a job another delivery is dispatching, leaving that claim alone", async () => {
    const taskId = await newTask();
    await taskStub(env, taskId).claimDispatch();
    expect((await deliver({ task_id: taskId })).explicitAcks).toHaveLength(1);
    expect((await live(taskId)).dispatch).toBe("claimed");
  });

  it("acknowledges a job for a task that has already ended", async () => {
    const taskId = await newTask();
    await taskStub(env, taskId).failTask("CANCELED", "canceled");
    expect((await deliver({ task_id: taskId })).explicitAcks).toHaveLength(1);
  });

  it("drops a malformed message after logging it", async () => {
    expect((await deliver({ nope: true })).explicitAcks).toHaveLength(1);
  });
});
