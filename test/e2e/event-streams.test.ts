import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack } from "../../scripts/lib/local-stack";
import { startStalledOrigin } from "../helpers/stalled-origin";

/**
 * Issue 18 #5 on the real stack (wrangler's workerd over HTTP, where a revoked key's stream took
 * ~16 s to end): an open event stream ends within seconds of its API key's revocation or its
 * console session's sign-out, while the task goes on.
 */
const END_WITHIN_MS = 5_000;
const PASSWORD = "correct horse battery";

let stack: Stack;
let origin: Awaited<ReturnType<typeof startStalledOrigin>>;
let stalledInput: string;

beforeAll(async () => {
  stack = await Stack.start();
  // An input that never arrives keeps a task running for as long as a test needs.
  origin = await startStalledOrigin();
  stalledInput = origin.url;
}, 120_000);

afterAll(async () => {
  origin?.close();
  await stack?.stop();
});

/** A console user signed in over HTTP, as the browser is: cookie, Origin and CSRF token. */
class Browser {
  cookie = "";
  private csrf = "";

  async fetch(path: string, init: { method?: string; json?: unknown; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { origin: stack.edgeUrl, cookie: this.cookie, "x-csrf-token": this.csrf, ...init.headers };
    if (init.json !== undefined) headers["content-type"] = "application/json";
    const response = await stack.fetch(path, { method: init.method ?? (init.json !== undefined ? "POST" : "GET"), headers, body: init.json === undefined ? undefined : JSON.stringify(init.json) });
    const set = response.headers.getSetCookie().find((cookie) => cookie.startsWith("ffedge_session="));
    if (set) this.cookie = set.split(";")[0]!;
    return response;
  }

  async signUpAndIn(email: string): Promise<void> {
    expect((await this.fetch("/console/api/auth/signup", { json: { email, password: PASSWORD } })).status).toBe(202);
    const link = await pollFor(async () => {
      const { messages } = (await (await stack.fetch(`/console/api/dev/outbox?to=${encodeURIComponent(email)}`)).json()) as { messages: { links: string[] }[] };
      return messages.flatMap((message) => message.links).find((candidate) => candidate.includes("/console/verify?token="));
    });
    expect(link.startsWith(`${stack.edgeUrl}/console/verify?token=`)).toBe(true);
    expect((await this.fetch("/console/api/auth/verify", { json: { token: new URL(link).searchParams.get("token") } })).status).toBe(200);
    const signin = await this.fetch("/console/api/auth/signin", { json: { email, password: PASSWORD } });
    expect(signin.status).toBe(200);
    this.csrf = ((await signin.json()) as { csrf_token: string }).csrf_token;
  }
}

async function pollFor<T>(get: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 100))) {
    const value = await get();
    if (value !== undefined) return value;
  }
  throw new Error("timed out");
}

/** Reads an event stream until it ends; returns the events seen and when it ended. */
async function readToEnd(response: Response, limitMs = 40_000): Promise<{ events: string[]; endedAt: number }> {
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const timeout = setTimeout(() => reader.cancel().catch(() => {}), limitMs);
  let text = "";
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read().catch(() => ({ done: true as const, value: undefined }));
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  clearTimeout(timeout);
  return { events: [...text.matchAll(/^event: (.*)$/gm)].map((match) => match[1]!), endedAt: Date.now() };
}

/** A signed-in console user with a key of its own, and a task of that key that stays running. */
async function userWithKeyAndTask(label: string): Promise<{ browser: Browser; keyId: string; key: string; taskId: string }> {
  const browser = new Browser();
  await browser.signUpAndIn(`streams-${label}-${Date.now()}@example.com`);
  const created = (await (await browser.fetch("/console/api/keys", { json: { name: label } })).json()) as { id: string; key: string };
  const submitted = await stack.fetch("/v1/tasks", { method: "POST", headers: { authorization: `Bearer ${created.key}`, "content-type": "application/json" }, body: JSON.stringify({ command: `ffmpeg -i ${stalledInput} out.mp4` }) });
  expect(submitted.status).toBe(201);
  return { browser, keyId: created.id, key: created.key, taskId: ((await submitted.json()) as { task_id: string }).task_id };
}

/** Opens a WebSocket (undici's takes headers as an extension of the standard constructor); resolves once open. */
async function openSocket(path: string, headers: Record<string, string>): Promise<{ closed: Promise<{ code: number; at: number }> }> {
  const socket = new WebSocket(`${stack.edgeUrl.replace(/^http/, "ws")}${path}`, { headers } as unknown as string[]);
  const closed = new Promise<{ code: number; at: number }>((resolve) => socket.addEventListener("close", (event) => resolve({ code: event.code, at: Date.now() })));
  await new Promise((resolve, reject) => (socket.addEventListener("open", resolve), socket.addEventListener("error", reject)));
  return { closed };
}

/** `end` (a revocation or a sign-out, answered 204) ends the open stream within END_WITHIN_MS, before the task ends. */
async function expectStreamEndsSoonAfter(stream: Response, end: () => Promise<Response>): Promise<void> {
  const read = readToEnd(stream);
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect((await end()).status).toBe(204);
  const endedBy = Date.now();
  const { events, endedAt } = await read;
  expect(endedAt - endedBy).toBeLessThan(END_WITHIN_MS);
  expect(events).not.toContain("failed");
  expect(events).not.toContain("completed");
}

describe("open event streams on the real stack (issue 18 #5)", () => {
  it("end within seconds of the API key's revocation, while the task goes on", async () => {
    const { browser, keyId, key, taskId } = await userWithKeyAndTask("key");
    const stream = await stack.fetch(`/v1/tasks/${taskId}/events`, { headers: { authorization: `Bearer ${key}` } });
    await expectStreamEndsSoonAfter(stream, () => browser.fetch(`/console/api/keys/${keyId}`, { method: "DELETE" }));
  }, 90_000);

  it("close a WebSocket within seconds of the API key's revocation", async () => {
    const { browser, keyId, key, taskId } = await userWithKeyAndTask("socket");
    const { closed } = await openSocket(`/v1/tasks/${taskId}/events`, { authorization: `Bearer ${key}` });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await browser.fetch(`/console/api/keys/${keyId}`, { method: "DELETE" })).status).toBe(204);
    const revokedAt = Date.now();
    const { code, at } = await closed;
    expect(code).toBe(4401);
    expect(at - revokedAt).toBeLessThan(END_WITHIN_MS);
  }, 90_000);

  it("end within seconds of the console session's sign-out, while the task goes on", async () => {
    const { browser, taskId } = await userWithKeyAndTask("session");
    const stream = await browser.fetch(`/console/api/v1/tasks/${taskId}/events`);
    await expectStreamEndsSoonAfter(stream, () => browser.fetch("/console/api/auth/signout", { method: "POST" }));
  }, 90_000);

  it("close a console session's WebSocket within seconds of its sign-out", async () => {
    const { browser, taskId } = await userWithKeyAndTask("session-socket");
    const { closed } = await openSocket(`/console/api/v1/tasks/${taskId}/events`, { cookie: browser.cookie, origin: stack.edgeUrl });
    expect((await browser.fetch("/console/api/auth/signout", { method: "POST" })).status).toBe(204);
    const signedOutAt = Date.now();
    const { code, at } = await closed;
    expect(code).toBe(4401);
    expect(at - signedOutAt).toBeLessThan(END_WITHIN_MS);
  }, 90_000);
});
