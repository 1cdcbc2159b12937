import { createExecutionContext, createMessageBatch, env, getQueueResult, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { dispatchJobs } from "../../../edge/dispatch/queue-consumer";
import { findTaskById, insertTask } from "../../../edge/tasks/repository";
import { dispatchLineStub, taskStub } from "../../../edge/lib/stubs";
import { liveState } from "../../../edge/tasks/live-state";
import type { LiveState } from "../../../edge/tasks/state";
import type { JobMessage } from "../../../shared/schemas/queue";
import { createUser } from "../helpers";

async function newTask(userId?: string, createdAt = new Date().toISOString()): Promise<JobMessage> {
  const user = userId ?? (await createUser()).userId;
  const taskId = `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const command = "-i https://example.com/a.mp4 out.mp4";
  await insertTask(env.DB, { id: taskId, user_id: user, command, with_metadata: 0, webhook_url: null, created_at: createdAt });
  const job = { task_id: taskId, user_id: user, created_at: createdAt };
  await taskStub(env, taskId).init(job, { command, with_metadata: false, webhook_url: null });
  return job;
}

async function deliver(body: unknown, attempts = 1) {
  return deliverAll([body], attempts);
}

async function deliverAll(bodies: unknown[], attempts = 1) {
  const batch = createMessageBatch("ffedge-jobs", bodies.map((body) => ({ id: crypto.randomUUID(), timestamp: new Date(), attempts, body })));
  const ctx = createExecutionContext();
  await dispatchJobs(batch, env);
  return getQueueResult(batch, ctx);
}

async function live(taskId: string): Promise<LiveState> {
  return (await liveState(env, taskId))!;
}

describe("jobs queue consumer", () => {
  it("acknowledges when no transcoder answers and leaves the retry to the task, a few seconds later", async () => {
    const job = await newTask();
    const taskId = job.task_id;
    const before = Date.now();
    const result = await deliver(job);
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
    const job = await newTask();
    const taskId = job.task_id;
    const result = await deliver(job, 10);
    expect(result.explicitAcks).toHaveLength(1);
    expect(result.retryMessages).toEqual([]);
    expect((await findTaskById(env.DB, taskId))!.status).toBe("pending");
  });

  it("acknowledges a redelivered job whose task was already dispatched, without dispatching again", async () => {
    const job = await newTask();
    const taskId = job.task_id;
    const stub = taskStub(env, taskId);
    await stub.claimDispatch();
    await stub.markDispatched("http://127.0.0.1:8788", 0);
    const result = await deliver(job);
    expect(result.explicitAcks).toHaveLength(1);
    expect(await live(taskId)).toMatchObject({ dispatch: "dispatched", dispatch_target: "http://127.0.0.1:8788" });
  });

  it("acknowledges a duplicate of a job another delivery is dispatching, leaving that claim alone", async () => {
    const job = await newTask();
    const taskId = job.task_id;
    await taskStub(env, taskId).claimDispatch();
    expect((await deliver(job)).explicitAcks).toHaveLength(1);
    expect((await live(taskId)).dispatch).toBe("claimed");
  });

  it("acknowledges a job for a task that has already ended", async () => {
    const job = await newTask();
    const taskId = job.task_id;
    await taskStub(env, taskId).failTask("CANCELED", "canceled");
    expect((await deliver(job)).explicitAcks).toHaveLength(1);
  });

  it("drops a malformed message after logging it", async () => {
    expect((await deliver({ nope: true })).explicitAcks).toHaveLength(1);
    expect((await deliver({ task_id: "tsk_only_an_id" })).explicitAcks).toHaveLength(1);
  });

  it("gives the slots of a user's jobs delivered together in submission order, and makes the rest wait", async () => {
    const { userId } = await createUser();
    const base = Date.now();
    const jobs: JobMessage[] = [];
    for (let i = 0; i < 6; i++) jobs.push(await newTask(userId, new Date(base + i * 1000).toISOString()));
    const result = await deliverAll([...jobs].reverse());
    expect(result.explicitAcks).toHaveLength(6);
    const states = await Promise.all(jobs.map((job) => live(job.task_id)));
    expect(states.slice(0, 5).map((state) => state.dispatch)).toEqual(["queued", "queued", "queued", "queued", "queued"]);
    expect(states.slice(0, 5).every((state) => state.unreachable === 1)).toBe(true);
    expect(states[5]).toMatchObject({ status: "pending", dispatch: "waiting", unreachable: 0 });
    expect(await dispatchLineStub(env, userId).usage()).toEqual({ running: 5, waiting: 1, cap: 5 });
  });

  it("frees the slot a late duplicate of an ended task was given", async () => {
    const job = await newTask();
    await taskStub(env, job.task_id).failTask("CANCELED", "canceled");
    await deliver(job);
    expect(await dispatchLineStub(env, job.user_id).usage()).toMatchObject({ running: 0, waiting: 0 });
  });
});
