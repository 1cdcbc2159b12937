import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { handOver } from "../../../edge/webhooks/handover";
import { expectProblem } from "../../helpers/problems";
import { api, createUser, postJson } from "../helpers";
import { endedTask, handover, hookUrl, received, receiverName } from "../webhooks/fixtures";

const BASE = "/v1/webhooks/endpoints";

interface Endpoint {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  created_at: string;
  updated_at: string;
  secret?: string;
}

function send(path: string, key: string | undefined, method: string, body?: unknown): Promise<Response> {
  return api(path, key, { method, ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }) });
}

async function register(key: string, body: Record<string, unknown> = {}): Promise<Endpoint & { secret: string }> {
  const response = await postJson(BASE, key, { url: "https://hooks.example.com/ffedge", events: ["task.completed"], ...body });
  expect(response.status, await response.clone().text()).toBe(201);
  return response.json();
}

describe("POST /v1/webhooks/endpoints", () => {
  it("registers an endpoint and shows its secret only in this answer", async () => {
    const { key } = await createUser();
    const response = await postJson(BASE, key, { url: "https://hooks.example.com/ffedge", events: ["task.completed", "task.failed"], description: "CI" });
    expect(response.status).toBe(201);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const created = await response.json<Endpoint>();
    expect(created).toEqual({
      id: expect.stringMatching(/^whe_[0-9a-f]{24}$/), url: "https://hooks.example.com/ffedge", events: ["task.completed", "task.failed"], description: "CI", enabled: true,
      created_at: expect.any(String), updated_at: created.created_at, secret: expect.stringMatching(/^whsec_/),
    });
    const one = await (await api(`${BASE}/${created.id}`, key)).text();
    const list = await (await api(BASE, key)).text();
    for (const text of [one, list]) {
      expect(text).toContain(created.id);
      expect(text).not.toContain(created.secret!);
      expect(text).not.toContain('"secret"');
    }
  });

  it.each([
    [{ url: "https://hooks.example.com/x", events: [] }, "VALIDATION_FAILED"],
    [{ url: "https://hooks.example.com/x", events: ["task.started"] }, "VALIDATION_FAILED"],
    [{ url: "https://hooks.example.com/x" }, "VALIDATION_FAILED"],
    [{ events: ["task.completed"] }, "VALIDATION_FAILED"],
    [{ url: "https://hooks.example.com/x", events: ["task.completed"], description: "d".repeat(201) }, "VALIDATION_FAILED"],
    [{ url: "https://hooks.example.com/x", events: ["task.completed"], enabled: "yes" }, "VALIDATION_FAILED"],
  ])("refuses %j with 400 %s and stores nothing", async (body, code) => {
    const { key } = await createUser();
    await expectProblem(await postJson(BASE, key, body), 400, code);
    expect(await (await api(BASE, key)).json()).toEqual({ endpoints: [] });
  });

  it.each([
    ["https://169.254.169.254/latest/meta-data/", "URL_HOST_BLOCKED"],
    ["https://10.1.2.3/hook", "URL_HOST_BLOCKED"],
    ["https://192.168.0.10/hook", "URL_HOST_BLOCKED"],
    ["https://[::1]/hook", "URL_HOST_BLOCKED"],
    ["https://[::ffff:127.0.0.1]/hook", "URL_HOST_BLOCKED"],
    ["https://localhost/hook", "URL_HOST_BLOCKED"],
    ["https://metadata.google.internal/hook", "URL_HOST_BLOCKED"],
    ["http://hooks.example.com/ffedge", "URL_NOT_ALLOWED"],
    ["https://user:pass@hooks.example.com/ffedge", "URL_NOT_ALLOWED"],
    ["not a url", "URL_NOT_ALLOWED"],
  ])("refuses the URL %s with 400 %s", async (url, code) => {
    const { key } = await createUser();
    await expectProblem(await postJson(BASE, key, { url, events: ["task.completed"] }), 400, code);
    expect(await (await api(BASE, key)).json()).toEqual({ endpoints: [] });
  });

  it("allows plain http only to the development allow-list", async () => {
    const { key } = await createUser();
    await register(key, { url: hookUrl(receiverName()) });
  });

  it("refuses the 21st endpoint with 409 ENDPOINT_LIMIT_REACHED", async () => {
    const { key } = await createUser();
    for (let i = 0; i < 20; i++) await register(key, { url: `https://hooks.example.com/${i}` });
    await expectProblem(await postJson(BASE, key, { url: "https://hooks.example.com/21", events: ["task.completed"] }), 409, "ENDPOINT_LIMIT_REACHED");
    expect((await (await api(BASE, key)).json<{ endpoints: Endpoint[] }>()).endpoints).toHaveLength(20);
  });

  it("answers 401 without a key", async () => {
    await expectProblem(await postJson(BASE, undefined, { url: "https://hooks.example.com/x", events: ["task.completed"] }), 401, "UNAUTHORIZED");
    await expectProblem(await api(BASE, undefined), 401, "UNAUTHORIZED");
  });
});

describe("GET, PATCH and DELETE /v1/webhooks/endpoints/{endpoint_id}", () => {
  it("lists the user's endpoints, oldest first, and reads one", async () => {
    const { key } = await createUser();
    const first = await register(key, { url: "https://hooks.example.com/1" });
    const second = await register(key, { url: "https://hooks.example.com/2", events: ["file.expired"] });
    const { endpoints } = await (await api(BASE, key)).json<{ endpoints: Endpoint[] }>();
    expect(endpoints.map((endpoint) => endpoint.id)).toEqual([first.id, second.id]);
    expect(await (await api(`${BASE}/${second.id}`, key)).json()).toMatchObject({ id: second.id, events: ["file.expired"], enabled: true });
  });

  it("changes the URL, events and enabled flag, checking the new URL", async () => {
    const { key } = await createUser();
    const created = await register(key);
    const response = await send(`${BASE}/${created.id}`, key, "PATCH", { url: "https://hooks.example.org/new", events: ["task.failed", "file.expired"], enabled: false });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ id: created.id, url: "https://hooks.example.org/new", events: ["task.failed", "file.expired"], enabled: false, description: null });
    await expectProblem(await send(`${BASE}/${created.id}`, key, "PATCH", { url: "https://10.0.0.1/hook" }), 400, "URL_HOST_BLOCKED");
    await expectProblem(await send(`${BASE}/${created.id}`, key, "PATCH", {}), 400, "VALIDATION_FAILED");
    expect(await (await api(`${BASE}/${created.id}`, key)).json()).toMatchObject({ url: "https://hooks.example.org/new" });
  });

  it("deletes an endpoint with its secrets", async () => {
    const { key } = await createUser();
    const created = await register(key);
    expect((await send(`${BASE}/${created.id}`, key, "DELETE")).status).toBe(204);
    await expectProblem(await api(`${BASE}/${created.id}`, key), 404, "NOT_FOUND");
    const secrets = await env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_endpoint_secrets WHERE endpoint_id = ?").bind(created.id).first<{ n: number }>();
    expect(secrets!.n).toBe(0);
    await expectProblem(await send(`${BASE}/${created.id}`, key, "DELETE"), 404, "NOT_FOUND");
  });

  it("answers 404 for another user's endpoint on every route, and changes nothing", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const created = await register(alice.key);
    const path = `${BASE}/${created.id}`;
    for (const [method, suffix, body] of [
      ["GET", "", undefined], ["PATCH", "", { enabled: false }], ["DELETE", "", undefined], ["POST", "/rotate-secret", undefined],
      ["GET", "/deliveries", undefined], ["POST", "/deliveries/msg_x/redeliver", undefined],
    ] as const) {
      const response = await send(`${path}${suffix}`, bob.key, method, body);
      const problem = await expectProblem(response, 404, "NOT_FOUND");
      expect(JSON.stringify(problem)).not.toContain("hooks.example.com");
    }
    expect(await (await api(path, alice.key)).json()).toMatchObject({ enabled: true });
    expect((await (await api(BASE, bob.key)).json<{ endpoints: Endpoint[] }>()).endpoints).toEqual([]);
  });
});

describe("rotation, deliveries and redelivery", () => {
  it("rotates the secret: a new one shown once, the old one valid 24 h more", async () => {
    const { key } = await createUser();
    const created = await register(key);
    const response = await send(`${BASE}/${created.id}/rotate-secret`, key, "POST");
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const rotated = await response.json<{ secret: string; created_at: string; previous_valid_until: string }>();
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect(Date.parse(rotated.previous_valid_until) - Date.parse(rotated.created_at)).toBe(24 * 3_600_000);
  });

  it("logs each event with its attempts, and redelivers one of them", async () => {
    const user = await createUser();
    const name = receiverName();
    const created = await register(user.key, { url: hookUrl(name, 202) });
    const task = await endedTask(null, "completed", user);
    await handOver(env, await handover(task.taskId));
    const eventId = `msg_${task.taskId}_completed`;

    const logOf = async () => (await api(`${BASE}/${created.id}/deliveries`, user.key)).json<{ events: { event_id: string; delivered: boolean; attempts: { redelivery: boolean; status_code: number }[] }[] }>();
    let log = await logOf();
    for (let tries = 0; log.events[0]?.attempts.length !== 1 && tries < 200; tries++) log = await new Promise((resolve) => setTimeout(resolve, 50)).then(logOf);
    expect(log.events).toEqual([{ event_id: eventId, type: "task.completed", task_id: task.taskId, created_at: expect.any(String), delivered: true, attempts: [expect.objectContaining({ attempt: 1, status_code: 202, success: true, redelivery: false })] }]);

    const redelivered = await send(`${BASE}/${created.id}/deliveries/${eventId}/redeliver`, user.key, "POST");
    expect(redelivered.status).toBe(202);
    expect(await redelivered.json()).toEqual({ webhook_id: eventId, queued: true });
    for (let tries = 0; log.events[0]!.attempts.length !== 2 && tries < 200; tries++) log = await new Promise((resolve) => setTimeout(resolve, 50)).then(logOf);
    expect(log.events[0]!.attempts.map((attempt) => attempt.redelivery)).toEqual([false, true]);
    const requests = await received(name);
    expect(requests).toHaveLength(2);
    expect(() => new Webhook(created.secret).verify(requests[1]!.body, requests[1]!.headers)).not.toThrow();

    await expectProblem(await send(`${BASE}/${created.id}/deliveries/msg_unknown/redeliver`, user.key, "POST"), 404, "NOT_FOUND");
  });

  it("refuses to redeliver to a disabled endpoint with 409 ENDPOINT_DISABLED, queuing and sending nothing", async () => {
    const user = await createUser();
    const name = receiverName();
    const created = await register(user.key, { url: hookUrl(name, 202) });
    const task = await endedTask(null, "completed", user);
    await handOver(env, await handover(task.taskId));
    const eventId = `msg_${task.taskId}_completed`;
    const attemptsOf = async () => (await (await api(`${BASE}/${created.id}/deliveries`, user.key)).json<{ events: { attempts: unknown[] }[] }>()).events[0]?.attempts.length ?? 0;
    for (let tries = 0; (await attemptsOf()) !== 1 && tries < 200; tries++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await attemptsOf()).toBe(1);

    expect((await send(`${BASE}/${created.id}`, user.key, "PATCH", { enabled: false })).status).toBe(200);
    const refused = await send(`${BASE}/${created.id}/deliveries/${eventId}/redeliver`, user.key, "POST");
    const problem = await expectProblem(refused, 409, "ENDPOINT_DISABLED");
    expect(problem).toMatchObject({ endpoint_id: created.id, detail: expect.stringContaining("disabled") });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await attemptsOf()).toBe(1);
    expect(await received(name)).toHaveLength(1);
    // An unknown event is still answered 404, disabled or not.
    await expectProblem(await send(`${BASE}/${created.id}/deliveries/msg_unknown/redeliver`, user.key, "POST"), 404, "NOT_FOUND");
  });
});

describe("the OpenAPI document", () => {
  it("lists the endpoint routes and the file.expired event", async () => {
    const document = await (await api("/openapi.json", undefined)).json<{ paths: Record<string, Record<string, unknown>>; webhooks: Record<string, Record<string, unknown>> }>();
    expect(Object.keys(document.paths[BASE] ?? {}).sort()).toEqual(["get", "post"]);
    expect(Object.keys(document.paths[`${BASE}/{endpoint_id}`] ?? {}).sort()).toEqual(["delete", "get", "patch"]);
    for (const path of [`${BASE}/{endpoint_id}/rotate-secret`, `${BASE}/{endpoint_id}/deliveries/{event_id}/redeliver`]) expect(document.paths[path]?.post).toBeDefined();
    expect(document.paths[`${BASE}/{endpoint_id}/deliveries`]?.get).toBeDefined();
    expect(document.webhooks["/file.expired"]?.post).toBeDefined();
  });
});
