import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { KEY_RECHECK_MS } from "../../../edge/accounts/credentials";
import { api, createUser, postJson } from "../helpers";
import { type ConsoleClient, signedInUser } from "./client";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -t 2 out.mp4";
/** "Within seconds": one re-check period plus slack for a loaded machine. */
const END_WITHIN_MS = KEY_RECHECK_MS + 2_500;

/** Milliseconds from now until the stream's body ends (or `limitMs` passes). */
async function msUntilEnd(response: Response, limitMs = 30_000): Promise<number> {
  const started = Date.now();
  const reader = response.body!.getReader();
  const timeout = setTimeout(() => reader.cancel().catch(() => {}), limitMs);
  while (!(await reader.read().catch(() => ({ done: true }))).done);
  clearTimeout(timeout);
  return Date.now() - started;
}

/** Opens the task's events as a WebSocket; resolves with the close event. */
async function socketClosed(response: Response, limitMs = 30_000): Promise<{ code: number; reason: string; ms: number } | undefined> {
  expect(response.status).toBe(101);
  const socket = response.webSocket!;
  socket.accept();
  const started = Date.now();
  return Promise.race([
    new Promise<{ code: number; reason: string; ms: number }>((resolve) => socket.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason, ms: Date.now() - started }))),
    new Promise<undefined>((resolve) => setTimeout(resolve, limitMs)),
  ]);
}

async function consoleTask(client: ConsoleClient): Promise<string> {
  return (await (await client.fetch("/console/api/v1/tasks", { json: { command: COMMAND } })).json<{ task_id: string }>()).task_id;
}

describe("open event streams end when their credentials do (issue 18 #5)", () => {
  it("ends an API key's SSE stream within seconds of the key's revocation", async () => {
    const { key, userId } = await createUser();
    const { task_id } = await (await postJson("/v1/tasks", key, { command: COMMAND })).json<{ task_id: string }>();
    const response = await api(`/v1/tasks/${task_id}/events`, key);
    expect(response.status).toBe(200);
    const ended = msUntilEnd(response);
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE user_id = ?").bind(new Date().toISOString(), userId).run();
    expect(await ended).toBeLessThan(END_WITHIN_MS);
  });

  it("closes an API key's WebSocket within seconds of the key's revocation, after checks that found it live", async () => {
    const { key, userId } = await createUser();
    const { task_id } = await (await postJson("/v1/tasks", key, { command: COMMAND })).json<{ task_id: string }>();
    const closed = socketClosed(await api(`/v1/tasks/${task_id}/events`, key, { headers: { upgrade: "websocket" } }));
    await new Promise((resolve) => setTimeout(resolve, 2 * KEY_RECHECK_MS + 500));
    const revokedAt = Date.now();
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE user_id = ?").bind(new Date().toISOString(), userId).run();
    expect(await closed).toMatchObject({ code: 4401 });
    expect(Date.now() - revokedAt).toBeLessThan(END_WITHIN_MS);
  });

  it("ends a console session's SSE stream within seconds of signing out", async () => {
    const { client } = await signedInUser();
    const taskId = await consoleTask(client);
    const response = await client.fetch(`/console/api/v1/tasks/${taskId}/events`);
    expect(response.status).toBe(200);
    const ended = msUntilEnd(response);
    expect((await client.fetch("/console/api/auth/signout", { method: "POST" })).status).toBe(204);
    expect(await ended).toBeLessThan(END_WITHIN_MS);
  });

  it("closes a console session's WebSocket within seconds of signing out", async () => {
    const { client } = await signedInUser();
    const taskId = await consoleTask(client);
    const closed = socketClosed(await client.fetch(`/console/api/v1/tasks/${taskId}/events`, { headers: { upgrade: "websocket" } }));
    expect((await client.fetch("/console/api/auth/signout", { method: "POST" })).status).toBe(204);
    expect(await closed).toEqual({ code: 4401, reason: expect.any(String), ms: expect.any(Number) });
    expect((await closed)!.ms).toBeLessThan(END_WITHIN_MS);
  });

  it("keeps a session's stream open while the session stands", async () => {
    const { client } = await signedInUser();
    const taskId = await consoleTask(client);
    const response = await client.fetch(`/console/api/v1/tasks/${taskId}/events`);
    expect(await msUntilEnd(response, END_WITHIN_MS + 1_000)).toBeGreaterThanOrEqual(END_WITHIN_MS + 1_000);
  });
});
