import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_DISPATCH_ATTEMPTS, backoffSeconds, dispatchJobs } from "../../../edge/queue/dispatch-jobs";
import { findTaskById, insertTask } from "../../../edge/tasks/repository";
import { taskStub } from "../../../edge/lib/stubs";
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

describe("jobs queue consumer", () => {
  it("retries with a delay when no transcoder answers, and releases the claim", async () => {
    const taskId = await newTask();
    const result = await deliver({ task_id: taskId });
    expect(result.explicitAcks).toEqual([]);
    expect(result.retryMessages).toHaveLength(1);
    expect(await taskStub(env, taskId).claimDispatch()).toEqual({ ok: true });
  });

  it("fails the task with DISPATCH_FAILED on the last attempt instead of dropping it", async () => {
    const taskId = await newTask();
    const result = await deliver({ task_id: taskId }, MAX_DISPATCH_ATTEMPTS);
    expect(result.explicitAcks).toHaveLength(1);
    const row = await findTaskById(env.DB, taskId);
    expect(row).toMatchObject({ status: "failed", error_code: "DISPATCH_FAILED" });
    expect(row!.error).toContain("attempts");
  });

  it("acknowledges a redelivered job whose task was already dispatched, without dispatching again", async () => {
    const taskId = await newTask();
    const stub = taskStub(env, taskId);
    await stub.claimDispatch();
    await stub.markDispatched("http://127.0.0.1:8788");
    const result = await deliver({ task_id: taskId });
    expect(result.explicitAcks).toHaveLength(1);
    expect(result.retryMessages).toEqual([]);
  });

  it("acknowledges a job for a task that has already ended", async () => {
    const taskId = await newTask();
    await taskStub(env, taskId).failTask("CANCELED", "canceled");
    expect((await deliver({ task_id: taskId })).explicitAcks).toHaveLength(1);
  });

  it("drops a malformed message after logging it", async () => {
    expect((await deliver({ nope: true })).explicitAcks).toHaveLength(1);
  });

  it("backs off exponentially, honouring Retry-After", () => {
    expect(backoffSeconds(1)).toBeGreaterThanOrEqual(1);
    expect(backoffSeconds(4)).toBeGreaterThanOrEqual(4);
    expect(backoffSeconds(4)).toBeLessThanOrEqual(8);
    expect(backoffSeconds(20)).toBeGreaterThanOrEqual(30);
    expect(backoffSeconds(20)).toBeLessThanOrEqual(60);
    expect(backoffSeconds(1, 30)).toBe(30);
  });
});
