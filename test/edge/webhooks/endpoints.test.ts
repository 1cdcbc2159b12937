import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { sweepExpiredFiles } from "../../../edge/files/sweep";
import { sweepUndeliveredWebhooks } from "../../../edge/tasks/webhook-event";
import { deliverToEndpoint } from "../../../edge/webhooks/endpoint-delivery";
import { listEndpointEvents } from "../../../edge/webhooks/endpoint-log";
import { createEndpoint, endpointSecrets, rotateEndpointSecret, updateEndpoint } from "../../../edge/webhooks/endpoints";
import { announceExpiredFiles } from "../../../edge/webhooks/file-events";
import { handOver, redeliverEndpointEvent } from "../../../edge/webhooks/handover";
import type { EndpointEventType, EndpointHandover } from "../../../shared/schemas/webhooks";
import { seedFile } from "../files/fixtures";
import { createUser } from "../helpers";
import { type ReceivedRequest, deliver, endedTask, handover, hookUrl, received, receiverName } from "./fixtures";

type User = { userId: string; key: string };

async function endpoint(user: User, events: EndpointEventType[], options: { status?: number; enabled?: boolean; at?: Date } = {}) {
  const name = receiverName();
  const created = await createEndpoint(env, user.userId, { url: hookUrl(name, options.status ?? 204), events, enabled: options.enabled ?? true }, options.at);
  return { ...created, name };
}

async function receivedUntil(name: string, count: number, timeoutMs = 10_000): Promise<ReceivedRequest[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const requests = await received(name);
    if (requests.length >= count) return requests;
    if (Date.now() > deadline) throw new Error(`${name} received ${requests.length} of ${count} requests`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function attemptsUntil(endpointId: string, count: number, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await listEndpointEvents(env.DB, endpointId);
    const attempts = events.flatMap((event) => event.attempts);
    if (attempts.length >= count) return events;
    if (Date.now() > deadline) throw new Error(`endpoint ${endpointId} has ${attempts.length} of ${count} attempts: ${JSON.stringify(events)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

describe("registered webhook endpoints", () => {
  it("keep their secret encrypted: it is returned at creation and never stored in clear", async () => {
    const user = await createUser();
    const created = await endpoint(user, ["task.completed"]);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const stored = await env.DB.prepare("SELECT ciphertext FROM webhook_endpoint_secrets WHERE endpoint_id = ?").bind(created.id).all<{ ciphertext: string }>();
    expect(stored.results).toHaveLength(1);
    expect(stored.results[0]!.ciphertext).not.toContain(created.secret.slice("whsec_".length, 20));
    expect(await endpointSecrets(env, created.id)).toEqual([created.secret]);
  });

  it("refuses a user's 21st endpoint with ENDPOINT_LIMIT_REACHED and stores nothing of it", async () => {
    const user = await createUser();
    for (let i = 0; i < 20; i++) await createEndpoint(env, user.userId, { url: `https://hooks.example.com/${i}`, events: ["task.completed"], enabled: true });
    await expect(createEndpoint(env, user.userId, { url: "https://hooks.example.com/21", events: ["task.completed"], enabled: true })).rejects.toMatchObject({ code: "ENDPOINT_LIMIT_REACHED" });
    const counts = await env.DB.batch([
      env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_endpoints WHERE user_id = ?").bind(user.userId),
      env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_endpoint_secrets WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE user_id = ?)").bind(user.userId),
    ]);
    expect(counts.map((result) => (result.results[0] as { n: number }).n)).toEqual([20, 20]);
  });

  it("get a task's end, signed with their own secret, when enabled and subscribed to it; the task's own webhook gets it too", async () => {
    const user = await createUser();
    const completed = await endpoint(user, ["task.completed", "file.expired"]);
    const failedOnly = await endpoint(user, ["task.failed"]);
    const disabled = await endpoint(user, ["task.completed"], { enabled: false });
    const stranger = await endpoint(await createUser(), ["task.completed"]);
    const own = receiverName();
    const task = await endedTask(hookUrl(own, 204), "completed", user);
    const event = await handover(task.taskId);

    await handOver(env, event);
    const [request] = await receivedUntil(completed.name, 1);
    await receivedUntil(own, 1);
    expect(new Webhook(completed.secret).verify(request!.body, request!.headers)).toEqual(JSON.parse(event.event.body));
    expect(request!.headers["webhook-id"]).toBe(`msg_${task.taskId}_completed`);
    expect(request!.headers["webhook-event"]).toBe("task.completed");
    expect(() => new Webhook(stranger.secret).verify(request!.body, request!.headers)).toThrow();
    await settle();
    for (const other of [failedOnly, disabled, stranger]) {
      expect(await received(other.name)).toEqual([]);
      expect(await listEndpointEvents(env.DB, other.id)).toEqual([]);
    }
    const [logged] = await attemptsUntil(completed.id, 1);
    expect(logged).toMatchObject({ event_id: `msg_${task.taskId}_completed`, type: "task.completed", task_id: task.taskId, delivered: true, attempts: [{ attempt: 1, status_code: 204, success: true, redelivery: false }] });
  });

  it("are not sent an event again when its hand-over is repeated after an attempt (an outbox retry, the sweep)", async () => {
    const user = await createUser();
    const target = await endpoint(user, ["task.failed"]);
    const task = await endedTask(null, "failed", user);
    const event = await handover(task.taskId);
    await handOver(env, event);
    await attemptsUntil(target.id, 1);
    await handOver(env, { ...event, first_attempt_at: new Date().toISOString() });
    await settle();
    expect(await received(target.name)).toHaveLength(1);
  });

  it("stop receiving once disabled: an event still waiting is dropped with the reason in the log", async () => {
    const user = await createUser();
    const target = await endpoint(user, ["task.failed"], { status: 500 });
    const task = await endedTask(null, "failed", user);
    await handOver(env, await handover(task.taskId));
    await attemptsUntil(target.id, 1);
    await updateEndpoint(env, user.userId, target.id, { enabled: false });

    const waiting: EndpointHandover = { endpoint_id: target.id, event: (await handover(task.taskId)).event, first_attempt_at: new Date().toISOString(), redelivery: false };
    expect(await deliverToEndpoint(env, waiting, 2)).toEqual({});
    expect(await received(target.name)).toHaveLength(1);
    const [logged] = await listEndpointEvents(env.DB, target.id);
    expect(logged!.attempts.at(-1)).toMatchObject({ status_code: null, success: false, error: expect.stringContaining("disabled") });
  });

  it("retry a failing receiver, and refuse at send a URL the policy refuses, without retrying it", async () => {
    const user = await createUser();
    const target = await endpoint(user, ["task.failed"], { status: 503 });
    const task = await endedTask(null, "failed", user);
    await handOver(env, await handover(task.taskId));
    await attemptsUntil(target.id, 1);
    const waiting: EndpointHandover = { endpoint_id: target.id, event: (await handover(task.taskId)).event, first_attempt_at: new Date().toISOString(), redelivery: false };
    expect((await deliverToEndpoint(env, waiting, 2)).retryAfterSeconds).toBeGreaterThan(0);

    await env.DB.prepare("UPDATE webhook_endpoints SET url = 'https://10.0.0.1/hook' WHERE id = ?").bind(target.id).run();
    expect(await deliverToEndpoint(env, waiting, 3)).toEqual({});
    const [logged] = await listEndpointEvents(env.DB, target.id);
    expect(logged!.attempts.at(-1)).toMatchObject({ status_code: null, success: false, error: expect.stringContaining("URL_HOST_BLOCKED") });
  });

  it("sign with the old and the new secret for 24 h after a rotation", async () => {
    const user = await createUser();
    const target = await endpoint(user, ["task.completed"]);
    const rotated = await rotateEndpointSecret(env, user.userId, target.id);
    expect(rotated.secret).not.toBe(target.secret);
    expect(Date.parse(rotated.previous_valid_until!) - Date.parse(rotated.created_at)).toBe(24 * 3_600_000);
    const task = await endedTask(null, "completed", user);
    await handOver(env, await handover(task.taskId));
    const [request] = await receivedUntil(target.name, 1);
    expect(request!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    for (const secret of [rotated.secret, target.secret]) expect(() => new Webhook(secret).verify(request!.body, request!.headers)).not.toThrow();
    const later = new Date(Date.now() + 25 * 3_600_000);
    expect(await endpointSecrets(env, target.id, later)).toEqual([rotated.secret]);
  });

  it("send an event again on redelivery, with the same webhook-id, as one more attempt in the log", async () => {
    const user = await createUser();
    const target = await endpoint(user, ["task.completed"]);
    const task = await endedTask(null, "completed", user);
    await handOver(env, await handover(task.taskId));
    await attemptsUntil(target.id, 1);
    expect(await redeliverEndpointEvent(env, { id: target.id, enabled: true }, `msg_${task.taskId}_completed`)).toBe(true);
    const requests = await receivedUntil(target.name, 2);
    expect(new Set(requests.map((request) => request.headers["webhook-id"]))).toEqual(new Set([`msg_${task.taskId}_completed`]));
    const [logged] = await attemptsUntil(target.id, 2);
    expect(logged!.attempts.map((attempt) => [attempt.attempt, attempt.redelivery])).toEqual([[1, false], [2, true]]);
    expect(await redeliverEndpointEvent(env, { id: target.id, enabled: true }, "msg_unknown")).toBe(false);
  });

  it("get file.expired for each file the sweep deletes, when subscribed to it", async () => {
    const user = await createUser();
    const target = await endpoint(user, ["file.expired"]);
    const tasksOnly = await endpoint(user, ["task.completed"]);
    const key = await seedFile(user.userId, { expiresAt: new Date(Date.now() - 1000) });
    await sweepExpiredFiles(env, new Date(), (keys) => announceExpiredFiles(env, keys));
    const [request] = await receivedUntil(target.name, 1);
    expect(request!.headers["webhook-event"]).toBe("file.expired");
    expect(new Webhook(target.secret).verify(request!.body, request!.headers)).toEqual({ key, kind: "upload", task_id: null, expired_at: expect.any(String) });
    await settle();
    expect(await received(tasksOnly.name)).toEqual([]);
  });

  it("get from the cron's sweep a task end that never reached them, once", async () => {
    const user = await createUser();
    const target = await endpoint(user, ["task.completed"], { at: new Date(Date.now() - 60_000) });
    const task = await endedTask(null, "completed", user);
    const later = new Date(Date.now() + 3 * 60_000);
    // Other files' tasks share this D1: the counts say at least this one.
    expect(await sweepUndeliveredWebhooks(env, later)).toBeGreaterThanOrEqual(1);
    const [request] = await receivedUntil(target.name, 1);
    expect(request!.headers["webhook-id"]).toBe(`msg_${task.taskId}_completed`);
    await attemptsUntil(target.id, 1);
    await sweepUndeliveredWebhooks(env, later);
    await settle();
    expect(await received(target.name)).toHaveLength(1);
  });

  it("get from the sweep a missed end without the task's own webhook being sent it again", async () => {
    const user = await createUser();
    const target = await endpoint(user, ["task.failed"], { at: new Date(Date.now() - 60_000) });
    const own = receiverName();
    const task = await endedTask(hookUrl(own, 204), "failed", user);
    await deliver(await handover(task.taskId));
    expect(await received(own)).toHaveLength(1);
    expect(await sweepUndeliveredWebhooks(env, new Date(Date.now() + 3 * 60_000))).toBeGreaterThanOrEqual(1);
    await receivedUntil(target.name, 1);
    await settle();
    expect(await received(own)).toHaveLength(1);
  });
});
