import { env, runInDurableObject } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../../edge/lib/stubs";
import { ENDPOINTS_KEY, type LastSent, SENT_KEY, progressEventDue } from "../../../edge/tasks/progress-events";
import { insertTask } from "../../../edge/tasks/repository";
import { sweepUndeliveredWebhooks } from "../../../edge/tasks/webhook-event";
import type { TaskObject } from "../../../edge/tasks/task-object";
import { listEndpointEvents } from "../../../edge/webhooks/endpoint-log";
import { createEndpoint } from "../../../edge/webhooks/endpoints";
import { endpointReceiverStub } from "../../../edge/webhooks/handover";
import type { EndpointEventType, ProgressHandover } from "../../../shared/schemas/webhooks";
import { originUrl } from "../files/fixtures";
import { originPaths } from "../files/origin";
import { api, createUser } from "../helpers";
import { type ReceivedRequest, hookUrl, received, receiverName } from "./fixtures";

type User = { userId: string; key: string };

async function endpoint(user: User, events: EndpointEventType[], url?: string) {
  const name = receiverName();
  const created = await createEndpoint(env, user.userId, { url: url ?? hookUrl(name, 204), events, enabled: true });
  return { ...created, name };
}

async function pendingTask(user: User) {
  const taskId = `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const createdAt = new Date().toISOString();
  const command = "ffmpeg -i https://example.com/a.mp4 out.mp4";
  await insertTask(env.DB, { id: taskId, user_id: user.userId, command, with_metadata: 0, webhook_url: null, created_at: createdAt });
  const stub = taskStub(env, taskId);
  await stub.init({ task_id: taskId, user_id: user.userId, created_at: createdAt }, { command, with_metadata: false, webhook_url: null });
  return { taskId, stub };
}

async function startedTask(user: User) {
  const task = await pendingTask(user);
  await task.stub.report({ type: "started", seq: 0 });
  return task;
}

async function receivedUntil(name: string, done: (requests: ReceivedRequest[]) => boolean, timeoutMs = 10_000): Promise<ReceivedRequest[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const requests = await received(name);
    if (done(requests)) return requests;
    if (Date.now() > deadline) throw new Error(`${name} received ${JSON.stringify(requests.map((r) => r.headers["webhook-id"]))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));
const progressOf = (request: ReceivedRequest) => (JSON.parse(request.body) as { progress: number }).progress;
const sent = (stub: DurableObjectStub<TaskObject>) => runInDurableObject(stub, (_instance, state) => state.storage.get<LastSent>(SENT_KEY));

function progress(taskId: string, endpointId: string, seq: number): ProgressHandover {
  return { endpoint_id: endpointId, task_id: taskId, seq, event: { id: `msg_${taskId}_progress_${seq}`, type: "task.progress", body: JSON.stringify({ task_id: taskId, seq }) } };
}

describe("when a progress event is due", () => {
  const last = { seq: 1, run: 0, progress: 20, at: 1_000_000 };
  it("sends the first one of a run once progress is above 0", () => {
    expect(progressEventDue(undefined, 0, 0, 0)).toBe(false);
    expect(progressEventDue(undefined, 0, 1, 0)).toBe(true);
    expect(progressEventDue(last, 1, 3, last.at)).toBe(true);
  });
  it("sends the next one after 10 points or 10 s, whichever comes first, never at the same progress", () => {
    expect(progressEventDue(last, 0, 29, last.at + 9_999)).toBe(false);
    expect(progressEventDue(last, 0, 30, last.at + 1)).toBe(true);
    expect(progressEventDue(last, 0, 21, last.at + 10_000)).toBe(true);
    expect(progressEventDue(last, 0, 20, last.at + 60_000)).toBe(false);
  });
  it("makes at most 10 events for a run that reports every point within 10 s", () => {
    let state: LastSent | undefined;
    let count = 0;
    for (let point = 0; point <= 99; point++) {
      if (progressEventDue(state, 0, point, 1_000 + point)) (state = { seq: ++count, run: 0, progress: point, at: 1_000 + point });
    }
    expect(count).toBe(10);
  });
});

describe("task.progress for registered endpoints", () => {
  it("goes, signed, to the endpoints subscribed to it, at most every 10 points, then the end; none to an endpoint subscribed to the end only", async () => {
    const user = await createUser();
    const both = await endpoint(user, ["task.progress", "task.completed"]);
    const endOnly = await endpoint(user, ["task.completed"]);
    const { taskId, stub } = await startedTask(user);
    for (const [seq, point] of [[1, 5], [2, 7], [3, 12], [4, 16], [5, 30]] as const) {
      await stub.report({ type: "progress", seq, progress: point });
      await settle();
    }
    await stub.report({ type: "completed", seq: 6, outputs: [{ filename: "out.mp4", size: 3 }] }, 0, true);
    const requests = await receivedUntil(both.name, (list) => list.some((r) => r.headers["webhook-event"] === "task.completed"));
    await settle();
    const all = await received(both.name);
    expect(all.map((r) => r.headers["webhook-event"])).toEqual(["task.progress", "task.progress", "task.progress", "task.completed"]);
    expect(all.slice(0, 3).map(progressOf)).toEqual([5, 16, 30]);
    expect(all.slice(0, 3).map((r) => r.headers["webhook-id"])).toEqual([1, 2, 3].map((n) => `msg_${taskId}_progress_${n}`));
    for (const request of requests) expect(() => new Webhook(both.secret).verify(request.body, request.headers)).not.toThrow();
    expect(JSON.parse(all[0]!.body)).toMatchObject({ task_id: taskId, status: "running", progress: 5 });
    const endOnlyGot = await receivedUntil(endOnly.name, (list) => list.length > 0);
    expect(endOnlyGot.map((r) => r.headers["webhook-event"])).toEqual(["task.completed"]);
  });

  it("goes after 10 s with any rise in progress, and not before", async () => {
    const user = await createUser();
    const hook = await endpoint(user, ["task.progress"]);
    const { stub } = await startedTask(user);
    await stub.report({ type: "progress", seq: 1, progress: 40 });
    await stub.report({ type: "progress", seq: 2, progress: 41 });
    // The clock: the last event is made to be 11 s old.
    await runInDurableObject(stub, async (_instance, state) => {
      const last = (await state.storage.get<LastSent>(SENT_KEY))!;
      await state.storage.put(SENT_KEY, { ...last, at: last.at - 11_000 });
    });
    await stub.report({ type: "progress", seq: 3, progress: 41.5 });
    await stub.report({ type: "progress", seq: 4, progress: 42 });
    await settle();
    expect((await received(hook.name)).map(progressOf)).toEqual([40, 41]);
    expect(await sent(stub)).toMatchObject({ seq: 2, progress: 41 });
  });

  it("logs a failed progress event in the endpoint's log, once, with no retry", async () => {
    const user = await createUser();
    const failing = await endpoint(user, ["task.progress"], hookUrl(receiverName(), 500));
    const { taskId, stub } = await startedTask(user);
    await stub.report({ type: "progress", seq: 1, progress: 10 });
    const deadline = Date.now() + 10_000;
    while ((await listEndpointEvents(env.DB, failing.id)).length === 0 && Date.now() < deadline) await settle();
    await settle();
    const events = await listEndpointEvents(env.DB, failing.id);
    expect(events).toMatchObject([{ event_id: `msg_${taskId}_progress_1`, type: "task.progress", task_id: taskId, delivered: false, attempts: [{ attempt: 1, status_code: 500, success: false }] }]);
  });

  it("keeps the newest waiting event for a task (latest wins), and none once the task's end has reached the endpoint", async () => {
    const user = await createUser();
    const slow = await endpoint(user, ["task.progress", "task.completed"], originUrl(originPaths.hang()));
    const taskId = `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
    const receiver = endpointReceiverStub(env, slow.id);
    await receiver.offerProgress(progress(taskId, slow.id, 1));
    await settle(); // the first is under way, held by the receiver that does not answer
    await receiver.offerProgress(progress(taskId, slow.id, 3));
    await receiver.offerProgress(progress(taskId, slow.id, 2));
    const slot = () => runInDurableObject(receiver, (_instance, state) => state.storage.get<ProgressHandover>(`progress:${taskId}`));
    expect((await slot())?.seq).toBe(3);
    await receiver.accept({ endpoint_id: slow.id, task_id: taskId, event: { id: `msg_${taskId}_completed`, type: "task.completed", body: "{}" }, first_attempt_at: new Date().toISOString(), redelivery: false });
    expect(await slot()).toBeUndefined();
    await receiver.offerProgress(progress(taskId, slow.id, 4));
    expect(await slot()).toBeUndefined();
  });

  it("costs a user without endpoints no statement of its own, from the first report to the end (the start and end writes read the endpoints)", async () => {
    const user = await createUser();
    const { stub } = await pendingTask(user);
    const statements: string[] = [];
    await runInDurableObject(stub, async (instance) => {
      // A real D1 that notes every statement the task object prepares while it runs and ends.
      const object = instance as unknown as { env: Env };
      const real = object.env;
      const counting = new Proxy(real.DB, { get: (db, name) => (name === "prepare" ? (sql: string) => (statements.push(sql), db.prepare(sql)) : Reflect.get(db, name, db)) });
      object.env = { ...real, DB: counting };
      try {
        await instance.report({ type: "started", seq: 0 });
        for (let seq = 1; seq <= 20; seq++) await instance.report({ type: "progress", seq, progress: seq * 4 });
        expect(statements).toHaveLength(1);
        expect(statements[0]).toMatch(/^UPDATE tasks SET status = 'running'.* RETURNING .*webhook_endpoints/s);
        await instance.report({ type: "completed", seq: 21, outputs: [{ filename: "out.mp4", size: 3 }] }, 0, true);
        await settle();
      } finally {
        object.env = real;
      }
    });
    expect(statements).toHaveLength(2);
    expect(statements[1]).toMatch(/^UPDATE tasks SET status = \?.* RETURNING .*webhook_endpoints/s);
  });

  it("reaches an endpoint subscribed during the run from the task's next read of its owner's endpoints (at most a minute later)", async () => {
    const user = await createUser();
    await endpoint(user, ["task.completed"]);
    const { stub } = await startedTask(user);
    const late = await endpoint(user, ["task.progress"]);
    await stub.report({ type: "progress", seq: 1, progress: 10 });
    await settle();
    expect(await received(late.name)).toEqual([]);
    // The clock: the task's read of its owner's endpoints is made to be a minute old.
    await runInDurableObject(stub, async (_instance, state) => {
      const known = (await state.storage.get<{ read_at: number }>(ENDPOINTS_KEY))!;
      await state.storage.put(ENDPOINTS_KEY, { ...known, read_at: known.read_at - 60_000 });
    });
    await stub.report({ type: "progress", seq: 2, progress: 20 });
    await settle();
    await stub.report({ type: "progress", seq: 3, progress: 30 });
    const requests = await receivedUntil(late.name, (list) => list.length > 0);
    expect(requests.map(progressOf)).toEqual([30]);
  });

  it("does not keep the end from an endpoint registered while the task ran, nor from one that logged a failed progress event", async () => {
    const user = await createUser();
    const { taskId, stub } = await startedTask(user);
    const late = await endpoint(user, ["task.completed"]);
    await stub.report({ type: "progress", seq: 1, progress: 50 });
    await stub.report({ type: "completed", seq: 2, outputs: [{ filename: "out.mp4", size: 3 }] }, 0, true);
    const [request] = await receivedUntil(late.name, (list) => list.length > 0);
    expect(request!.headers["webhook-id"]).toBe(`msg_${taskId}_completed`);

    // The sweep behind the outbox: a task whose end never reached an endpoint that logged a failed progress event of it.
    const failing = await endpoint(user, ["task.progress", "task.completed"], hookUrl(receiverName(), 500));
    await env.DB.prepare("UPDATE webhook_endpoints SET updated_at = ? WHERE id = ?").bind(new Date(Date.now() - 60_000).toISOString(), failing.id).run();
    await env.DB.prepare("INSERT INTO webhook_endpoint_events (endpoint_id, event_id, type, task_id, body, created_at) VALUES (?, ?, 'task.progress', ?, '{}', ?)")
      .bind(failing.id, `msg_${taskId}_progress_1`, taskId, new Date().toISOString()).run();
    await sweepUndeliveredWebhooks(env, new Date(Date.now() + 3 * 60_000));
    const deadline = Date.now() + 10_000;
    while (!(await listEndpointEvents(env.DB, failing.id)).some((event) => event.type === "task.completed") && Date.now() < deadline) await settle();
    expect((await listEndpointEvents(env.DB, failing.id)).map((event) => event.event_id)).toContain(`msg_${taskId}_completed`);
  });

  it("is accepted as a subscription by the API; an unknown event type is refused with VALIDATION_FAILED", async () => {
    const user = await createUser();
    const body = (events: string[]) => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ url: "https://hooks.example.com/p", events }) });
    const accepted = await api("/v1/webhooks/endpoints", user.key, body(["task.progress"]));
    expect(accepted.status).toBe(201);
    expect(await accepted.json()).toMatchObject({ events: ["task.progress"] });
    const refused = await api("/v1/webhooks/endpoints", user.key, body(["task.started"]));
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: "VALIDATION_FAILED" });
  });
});
