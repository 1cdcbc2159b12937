import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { signingSecrets } from "../../../edge/webhooks/signing";
import { api, createUser, postJson } from "../helpers";
import { deliver, endedTask, handover, hookUrl, received, receiverName, waitForDeliveries } from "../webhooks/fixtures";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -c:v libx264 out.mp4";

describe("POST /v1/tasks with a webhook", () => {
  it("accepts an https webhook", async () => {
    const { key } = await createUser();
    expect((await postJson("/v1/tasks", key, { command: COMMAND, webhook: "https://hooks.example.com/ffedge" })).status).toBe(201);
  });

  it.each([
    ["https://169.254.169.254/latest/meta-data/", "URL_HOST_BLOCKED"],
    ["https://10.1.2.3/hook", "URL_HOST_BLOCKED"],
    ["https://[::1]/hook", "URL_HOST_BLOCKED"],
    ["https://[::ffff:127.0.0.1]/hook", "URL_HOST_BLOCKED"],
    ["https://167772161/hook", "URL_HOST_BLOCKED"],
    ["https://100.64.0.1/hook", "URL_HOST_BLOCKED"],
    ["https://[fd00::1]/hook", "URL_HOST_BLOCKED"],
    ["https://localhost/hook", "URL_HOST_BLOCKED"],
    ["https://metadata.google.internal/hook", "URL_HOST_BLOCKED"],
    ["http://hooks.example.com/ffedge", "URL_NOT_ALLOWED"],
    ["https://hooks.example.com:8443/ffedge", "URL_NOT_ALLOWED"],
    ["https://user:pass@hooks.example.com/ffedge", "URL_NOT_ALLOWED"],
    ["ftp://hooks.example.com/ffedge", "URL_NOT_ALLOWED"],
    ["not a url", "URL_NOT_ALLOWED"],
  ])("refuses the webhook %s with 400 %s", async (webhook, code) => {
    const { key } = await createUser();
    const response = await postJson("/v1/tasks", key, { command: COMMAND, webhook });
    expect(response.status).toBe(400);
    expect((await response.json<{ code: string }>()).code).toBe(code);
  });

  it("allows plain http only to the development allow-list", async () => {
    const { key } = await createUser();
    expect((await postJson("/v1/tasks", key, { command: COMMAND, webhook: hookUrl(receiverName()) })).status).toBe(201);
  });
});

describe("GET /v1/tasks/{task_id}/webhooks", () => {
  it("lists every attempt with its status, latency and error", async () => {
    const { taskId, key } = await endedTask(hookUrl(receiverName(), 500), "completed");
    await deliver(await handover(taskId), 1);
    await env.DB.prepare("UPDATE tasks SET webhook_url = ? WHERE id = ?").bind(hookUrl(receiverName(), 200), taskId).run();
    await deliver(await handover(taskId), 2);

    const response = await api(`/v1/tasks/${taskId}/webhooks`, key);
    expect(response.status).toBe(200);
    const body = await response.json<{ webhook_id: string; webhook_url: string; deliveries: Record<string, unknown>[] }>();
    expect(body.webhook_id).toBe(`msg_${taskId}_completed`);
    expect(body.webhook_url).toMatch(/\/hook\//);
    expect(body.deliveries).toEqual([
      { attempt: 1, attempted_at: expect.any(String), redelivery: false, status_code: 500, latency_ms: expect.any(Number), success: false, error: expect.stringMatching(/500/) },
      { attempt: 2, attempted_at: expect.any(String), redelivery: false, status_code: 200, latency_ms: expect.any(Number), success: true, error: null },
    ]);
  });

  it("answers an empty log for a task without a webhook", async () => {
    const { taskId, key } = await endedTask(null);
    expect(await (await api(`/v1/tasks/${taskId}/webhooks`, key)).json()).toEqual({ webhook_url: null, webhook_id: null, deliveries: [] });
  });

  it("returns 404 for another user's task", async () => {
    const { taskId } = await endedTask(hookUrl(receiverName()));
    await deliver(await handover(taskId));
    const bob = await createUser();
    const response = await api(`/v1/tasks/${taskId}/webhooks`, bob.key);
    expect(response.status).toBe(404);
    const text = await response.text();
    expect(text).toContain("NOT_FOUND");
    expect(text).not.toContain("/hook/");
  });

  it("returns 404 for an unknown task and 401 without a key", async () => {
    const { key } = await createUser();
    expect((await api("/v1/tasks/tsk_unknown/webhooks", key)).status).toBe(404);
    expect((await api("/v1/tasks/tsk_unknown/webhooks", undefined)).status).toBe(401);
  });
});

describe("POST /v1/tasks/{task_id}/webhooks/redeliver", () => {
  it("sends the same event again, once, with the same webhook-id", async () => {
    const name = receiverName();
    const { taskId, key } = await endedTask(hookUrl(name), "completed");
    await deliver(await handover(taskId));

    const response = await api(`/v1/tasks/${taskId}/webhooks/redeliver`, key, { method: "POST" });
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ webhook_id: `msg_${taskId}_completed`, queued: true });

    const deliveries = await waitForDeliveries(taskId, (list) => list.length === 2);
    expect(deliveries[1]).toMatchObject({ attempt: 2, redelivery: true, success: true });
    const [first, again] = await received(name);
    expect(again!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(again!.body).toBe(first!.body);
  });

  it("answers 409 TASK_NOT_FINISHED for a task still running", async () => {
    const { key } = await createUser();
    const { task_id } = await (await postJson("/v1/tasks", key, { command: COMMAND, webhook: hookUrl(receiverName()) })).json<{ task_id: string }>();
    const response = await api(`/v1/tasks/${task_id}/webhooks/redeliver`, key, { method: "POST" });
    expect(response.status).toBe(409);
    expect((await response.json<{ code: string }>()).code).toBe("TASK_NOT_FINISHED");
  });

  it("answers 409 WEBHOOK_NOT_CONFIGURED for a task without a webhook", async () => {
    const { taskId, key } = await endedTask(null);
    const response = await api(`/v1/tasks/${taskId}/webhooks/redeliver`, key, { method: "POST" });
    expect(response.status).toBe(409);
    expect((await response.json<{ code: string }>()).code).toBe("WEBHOOK_NOT_CONFIGURED");
  });

  it("returns 404 for another user's task and sends nothing", async () => {
    const name = receiverName();
    const { taskId } = await endedTask(hookUrl(name));
    const bob = await createUser();
    expect((await api(`/v1/tasks/${taskId}/webhooks/redeliver`, bob.key, { method: "POST" })).status).toBe(404);
    expect((await api("/v1/tasks/tsk_unknown/webhooks/redeliver", bob.key, { method: "POST" })).status).toBe(404);
    expect((await api(`/v1/tasks/${taskId}/webhooks/redeliver`, undefined, { method: "POST" })).status).toBe(401);
    expect(await received(name)).toEqual([]);
  });
});

describe("POST /v1/webhook-secret/rotate", () => {
  it("shows a new whsec_ secret once, without caching", async () => {
    const { key } = await createUser();
    const response = await api("/v1/webhook-secret/rotate", key, { method: "POST" });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = await response.json<{ secret: string; created_at: string; previous_valid_until: string | null }>();
    expect(body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(body.previous_valid_until).toBeNull();
  });

  it("signs deliveries with both the old and the new secret during the overlap", async () => {
    const name = receiverName();
    const user = await createUser();
    const { taskId } = await endedTask(hookUrl(name), "completed", user);
    const [old] = await signingSecrets(env, user.userId);
    const rotated = await (await api("/v1/webhook-secret/rotate", user.key, { method: "POST" })).json<{ secret: string; previous_valid_until: string }>();
    expect(Date.parse(rotated.previous_valid_until) - Date.now()).toBeGreaterThan(23.9 * 3600_000);

    await deliver(await handover(taskId));
    const [request] = await received(name);
    expect(request!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    for (const secret of [old!, rotated.secret]) expect(() => new Webhook(secret).verify(request!.body, request!.headers)).not.toThrow();
  });

  it("requires an API key", async () => {
    expect((await api("/v1/webhook-secret/rotate", undefined, { method: "POST" })).status).toBe(401);
  });
});

describe("the OpenAPI document", () => {
  it("lists the webhook routes and describes the events", async () => {
    const document = await (await api("/openapi.json", undefined)).json<{ paths: Record<string, Record<string, unknown>>; webhooks: Record<string, Record<string, unknown>> }>();
    expect(document.paths["/v1/tasks/{task_id}/webhooks"]?.get).toBeDefined();
    expect(document.paths["/v1/tasks/{task_id}/webhooks/redeliver"]?.post).toBeDefined();
    expect(document.paths["/v1/webhook-secret/rotate"]?.post).toBeDefined();
    // Sub-app registrations are merged as paths, hence the leading slash on the event names.
    expect(Object.keys(document.webhooks).sort()).toEqual(["/file.expired", "/task.completed", "/task.failed", "/task.progress"]);
    expect(document.webhooks["/task.completed"]?.post).toBeDefined();
    expect(document.webhooks["/task.progress"]?.post).toBeDefined();
  });
});
