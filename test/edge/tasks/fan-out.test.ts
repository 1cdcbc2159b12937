import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hashToken } from "../../../shared/token-hash";
import { KEY_RECHECK_MS } from "../../../edge/accounts/credentials";
import { taskStub } from "../../../edge/lib/stubs";
import { api, createUser, postJson } from "../helpers";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -t 2 out.mp4";

interface Watcher {
  socket: WebSocket;
  events: string[];
  closed: Promise<{ code: number; reason: string }>;
  isClosed(): boolean;
}

async function newTask(key: string): Promise<string> {
  return ((await (await postJson("/v1/tasks", key, { command: COMMAND })).json()) as { task_id: string }).task_id;
}

/** Opens the task's event stream as a WebSocket through the Worker, as a client would. */
async function watch(taskId: string, key: string, headers: Record<string, string> = {}): Promise<Watcher> {
  const response = await api(`/v1/tasks/${taskId}/events`, key, { headers: { upgrade: "websocket", ...headers } });
  expect(response.status).toBe(101);
  const socket = response.webSocket!;
  socket.accept();
  const events: string[] = [];
  let isClosed = false;
  socket.addEventListener("message", (message) => {
    events.push((JSON.parse(message.data as string) as { event: string }).event);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.addEventListener("close", (event) => {
      isClosed = true;
      resolve({ code: event.code, reason: event.reason });
    });
  });
  return { socket, events, closed, isClosed: () => isClosed };
}

async function revokeKeysOf(userId: string): Promise<void> {
  await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE user_id = ?").bind(new Date().toISOString(), userId).run();
}

function alarmOf(taskId: string): Promise<number | null> {
  return runInDurableObject(taskStub(env, taskId), (_instance, state) => state.storage.getAlarm());
}

async function until(condition: () => boolean, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !condition() && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 50));
}

describe("WebSocket watchers of a task", () => {
  it("are closed with 4401 within seconds of their API key's revocation, by the task's own alarm, while the task goes on", async () => {
    const { key, userId } = await createUser();
    const taskId = await newTask(key);
    const stub = taskStub(env, taskId);
    // Running and just heard from: the task's own next check is 15 s away.
    await stub.report({ type: "started", seq: 100 });
    expect(await alarmOf(taskId)).toBeGreaterThan(Date.now() + KEY_RECHECK_MS);
    const watcher = await watch(taskId, key);
    expect(await alarmOf(taskId)).toBeLessThanOrEqual(Date.now() + KEY_RECHECK_MS);
    await revokeKeysOf(userId);
    // No alarm is run by hand here: the socket itself brought the alarm forward.
    const closed = await Promise.race([watcher.closed, new Promise<undefined>((resolve) => setTimeout(resolve, 20_000))]);
    expect(closed).toEqual({ code: 4401, reason: "API key revoked" });
    expect(watcher.events).toEqual(["status"]);
    expect((await (await api(`/v1/tasks/${taskId}`, undefined)).json<{ status: string }>()).status).toBe("running");
  });

  it("stay open and keep receiving events while their key stands", async () => {
    const { key } = await createUser();
    const taskId = await newTask(key);
    const watcher = await watch(taskId, key);
    const stub = taskStub(env, taskId);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await stub.report({ type: "started", seq: 100 });
    await stub.report({ type: "progress", seq: 101, progress: 40 });
    await until(() => watcher.events.length >= 3, 10_000);
    expect(watcher.events).toEqual(["status", "status", "progress"]);
    expect(watcher.isClosed()).toBe(false);
    watcher.socket.close(1000, "done");
  });

  it("are judged by the key that opened them, not by a key hash the client sent", async () => {
    const { key, userId } = await createUser();
    const other = await createUser();
    const taskId = await newTask(key);
    const watcher = await watch(taskId, key, { "x-ffedge-watcher-key": await hashToken(other.key) });
    await revokeKeysOf(userId);
    await runDurableObjectAlarm(taskStub(env, taskId));
    expect(await watcher.closed).toEqual({ code: 4401, reason: "API key revoked" });
  });

  it("close only the sockets of the revoked key", async () => {
    const alice = await createUser();
    const taskId = await newTask(alice.key);
    const first = await watch(taskId, alice.key);
    const stub = taskStub(env, taskId);
    // A second key of the same user, made through the CLI's statements for a new user, moved over.
    const second = await createUser();
    await env.DB.prepare("UPDATE api_keys SET user_id = ? WHERE user_id = ?").bind(alice.userId, second.userId).run();
    const kept = await watch(taskId, second.key);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE hash = ?").bind(new Date().toISOString(), await hashToken(alice.key)).run();
    await runDurableObjectAlarm(stub);
    expect((await first.closed).code).toBe(4401);
    expect(kept.isClosed()).toBe(false);
    await stub.failTask("CANCELED", "stop");
    expect((await kept.closed).code).toBe(1000);
  });
});
