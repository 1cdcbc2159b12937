import { env } from "cloudflare:test";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { config } from "../../../edge/lib/config";
import { checkWebhookUrl, deliverOnce, listDeliveries, MAX_DELIVERY_ATTEMPTS, retriesExhausted, RETRY_WINDOW_MS, retryDelaySeconds } from "../../../edge/webhooks/delivery";
import { signingSecrets } from "../../../edge/webhooks/signing";
import { AppError } from "../../../shared/errors";
import { WebhookEventSchema } from "../../../shared/schemas/webhooks";
import { originUrl } from "../files/fixtures";
import { originPaths } from "../files/origin";
import { api } from "../helpers";
import { deliver, endedTask, handover, hookUrl, received, receiverName } from "./fixtures";

/** The edge as configured for these tests, with a short delivery timeout. */
const quick: Env = { ...env, WEBHOOK_TIMEOUT_SECONDS: "1" };
const schedule = config(env).webhookRetryScheduleSeconds;
const production = config({ ...env, ENVIRONMENT: "production", DEV_FETCH_ALLOW_HOSTS: "127.0.0.1" }).devFetchAllowHosts;
const development = config(env).devFetchAllowHosts;

describe("a webhook delivery attempt", () => {
  it("POSTs the task object itself, signed, once, with the event type in webhook-event, and is done after a 2xx", async () => {
    const name = receiverName();
    const { taskId, key, userId } = await endedTask(hookUrl(name, 204), "completed");
    const result = await deliver(await handover(taskId));
    expect(result.retried).toBe(false);

    const [request, ...others] = await received(name);
    expect(others).toEqual([]);
    expect(request!.method).toBe("POST");
    expect(request!.headers["content-type"]).toBe("application/json");
    expect(request!.headers["webhook-id"]).toBe(`msg_${taskId}_completed`);
    expect(request!.headers["webhook-event"]).toBe("task.completed");
    const [secret] = await signingSecrets(env, userId);
    const event = WebhookEventSchema.parse(new Webhook(secret!).verify(request!.body, request!.headers));
    const task = await (await api(`/v1/tasks/${taskId}`, key)).json();
    expect(JSON.parse(request!.body)).toEqual(task);
    expect(event.status).toBe("completed");

    const deliveries = await listDeliveries(env.DB, taskId);
    expect(deliveries).toEqual([{ attempt: 1, attempted_at: expect.any(String), redelivery: false, status_code: 204, latency_ms: expect.any(Number), success: true, error: null }]);
  });

  it("sends task.failed with the task's error for a failed task", async () => {
    const name = receiverName();
    const { taskId } = await endedTask(hookUrl(name), "failed");
    await deliver(await handover(taskId));
    const [request] = await received(name);
    expect(request!.headers["webhook-event"]).toBe("task.failed");
    expect(WebhookEventSchema.parse(JSON.parse(request!.body))).toMatchObject({ task_id: taskId, status: "failed", error_code: "FFMPEG_FAILED" });
  });

  it("records a 500 and retries with growing delays, keeping the webhook-id and the body", async () => {
    const name = receiverName();
    const { taskId } = await endedTask(hookUrl(name, 500));
    const delays: number[] = [];
    for (const attempt of [1, 2, 3, 4]) delays.push((await deliverOnce(env, await handover(taskId), attempt)).retryAfterSeconds!);
    expect(delays.every((delay, i) => i === 0 || delay > delays[i - 1]!), String(delays)).toBe(true);
    expect((await deliver(await handover(taskId), 5)).retried).toBe(true);
    const requests = await received(name);
    expect(new Set(requests.map((r) => r.headers["webhook-id"]))).toEqual(new Set([`msg_${taskId}_failed`]));
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    const deliveries = await listDeliveries(env.DB, taskId);
    expect(deliveries.map((d) => [d.attempt, d.status_code, d.success])).toEqual([[1, 500, false], [2, 500, false], [3, 500, false], [4, 500, false], [5, 500, false]]);
    expect(deliveries[0]!.error).toMatch(/500/);
  });

  it("counts a 302 as a failure and never follows it", async () => {
    const name = receiverName();
    const followed = receiverName();
    const { taskId } = await endedTask(hookUrl(name, 302, originPaths.hook(followed)));
    const result = await deliver(await handover(taskId));
    expect(result.retried).toBe(true);
    expect(await received(followed)).toEqual([]);
    const [delivery] = await listDeliveries(env.DB, taskId);
    expect(delivery).toMatchObject({ status_code: 302, success: false, error: expect.stringMatching(/redirects are not followed/) });
  });

  it("times out a receiver that hangs, records it and retries", async () => {
    const { taskId } = await endedTask(originUrl(originPaths.hang()));
    const result = await deliver(await handover(taskId), 1, quick);
    expect(result.retried).toBe(true);
    const [delivery] = await listDeliveries(env.DB, taskId);
    expect(delivery).toMatchObject({ status_code: null, success: false, error: expect.stringMatching(/^URL_TIMEOUT/) });
    expect(delivery!.latency_ms).toBeGreaterThanOrEqual(1000);
  });

  it("records an unreachable receiver and retries", async () => {
    const { taskId } = await endedTask("http://127.0.0.1:9/hook");
    const result = await deliver(await handover(taskId));
    expect(result.retried).toBe(true);
    expect((await listDeliveries(env.DB, taskId))[0]).toMatchObject({ status_code: null, error: expect.stringMatching(/^URL_UNREACHABLE/) });
  });

  it("stops after a success", async () => {
    const name = receiverName();
    const { taskId } = await endedTask(hookUrl(name, 500));
    const event = await handover(taskId);
    await deliver(event, 1);
    const result = await deliver({ ...event, url: hookUrl(name, 200) }, 2);
    expect(result.retried).toBe(false);
    expect((await listDeliveries(env.DB, taskId)).map((d) => d.success)).toEqual([false, true]);
  });

  it("gives up once 24 h have passed since the first attempt", async () => {
    const { taskId } = await endedTask(hookUrl(receiverName(), 503));
    const result = await deliver(await handover(taskId, { first_attempt_at: new Date(Date.now() - 24 * 3600_000).toISOString() }), 12);
    expect(result.retried).toBe(false);
    expect(await listDeliveries(env.DB, taskId)).toHaveLength(1);
  });

  it("makes a single attempt for a redelivery", async () => {
    const { taskId } = await endedTask(hookUrl(receiverName(), 500));
    const result = await deliver(await handover(taskId, { redelivery: true }));
    expect(result.retried).toBe(false);
    expect(await listDeliveries(env.DB, taskId)).toMatchObject([{ attempt: 1, redelivery: true, status_code: 500 }]);
  });

  it.each([
    ["a private address", "https://10.0.0.7/hook", "URL_HOST_BLOCKED"],
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/", "URL_HOST_BLOCKED"],
    ["localhost", "https://localhost/hook", "URL_HOST_BLOCKED"],
    ["plain http to a public host", "http://hooks.example.com/hook", "URL_NOT_ALLOWED"],
  ])("refuses, records and does not retry a webhook now pointing at %s", async (_name, url, code) => {
    const { taskId, userId } = await endedTask(url);
    const result = await deliver(await handover(taskId));
    expect(result.retried).toBe(false);
    const [delivery] = await listDeliveries(env.DB, taskId);
    expect(delivery).toMatchObject({ status_code: null, latency_ms: null, success: false, error: expect.stringMatching(new RegExp(`^${code}`)) });
    const secrets = await env.DB.prepare("SELECT COUNT(*) AS n FROM webhook_secrets WHERE user_id = ?").bind(userId).first<{ n: number }>();
    expect(secrets!.n).toBe(0);
  });

  it("refuses a redirect from an allowed receiver to a blocked address without following it", async () => {
    const { taskId } = await endedTask(hookUrl(receiverName(), 307, "http://169.254.169.254/"));
    await deliver(await handover(taskId));
    expect((await listDeliveries(env.DB, taskId))[0]).toMatchObject({ status_code: 307, success: false });
  });
});

describe("the webhook retry schedule", () => {
  it("defaults to 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, 4 h, then every 8 h", () => {
    expect(schedule).toEqual([5, 30, 120, 600, 1800, 3600, 7200, 14_400, 28_800]);
    expect([1, 2, 3, 9, 10, 20].map((attempt) => retryDelaySeconds(attempt, schedule, () => 0.5))).toEqual([5, 30, 120, 28_800, 28_800, 28_800]);
  });

  it("jitters each delay by at most 20 % either way", () => {
    expect(retryDelaySeconds(2, schedule, () => 0)).toBe(24);
    expect(retryDelaySeconds(2, schedule, () => 0.999_999)).toBe(36);
  });

  it("never waits more than 12 h between attempts, nor less than 1 s", () => {
    expect(retryDelaySeconds(1, [50_000], () => 0.999)).toBe(43_200);
    expect(retryDelaySeconds(1, [1], () => 0)).toBe(1);
  });

  it("keeps retrying for at least 24 h, within its bound on attempts, even with the shortest jitter", () => {
    let elapsed = 0;
    let attempt = 1;
    const start = Date.now();
    while (!retriesExhausted(new Date(start).toISOString(), attempt, start + elapsed)) {
      elapsed += retryDelaySeconds(attempt, schedule, () => 0) * 1000;
      attempt++;
    }
    expect(elapsed).toBeGreaterThanOrEqual(RETRY_WINDOW_MS);
    expect(attempt).toBeLessThan(MAX_DELIVERY_ATTEMPTS);
  });

  it("stops once 24 h have passed since the first attempt", () => {
    const first = new Date(Date.now() - RETRY_WINDOW_MS + 1000).toISOString();
    expect(retriesExhausted(first, 5)).toBe(false);
    expect(retriesExhausted(first, 5, Date.now() + 1000)).toBe(true);
    expect(retriesExhausted(new Date().toISOString(), MAX_DELIVERY_ATTEMPTS)).toBe(true);
  });
});

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof AppError ? error.code : String(error);
  }
}

describe("checkWebhookUrl", () => {
  it("accepts a public https URL", () => {
    expect(checkWebhookUrl("https://hooks.example.com/ffedge?x=1", production).toString()).toBe("https://hooks.example.com/ffedge?x=1");
  });

  it.each([
    ["http://hooks.example.com/ffedge", "URL_NOT_ALLOWED"],
    ["http://127.0.0.1/hook", "URL_HOST_BLOCKED"],
    ["https://2130706433/hook", "URL_HOST_BLOCKED"],
    ["https://[::ffff:7f00:1]/hook", "URL_HOST_BLOCKED"],
    ["https://0x7f.1/hook", "URL_HOST_BLOCKED"],
    ["https://169.254.169.254/", "URL_HOST_BLOCKED"],
  ])("refuses %s in production, whatever the development allow-list says", (url, code) => {
    expect(codeOf(() => checkWebhookUrl(url, production))).toBe(code);
  });

  it("allows plain http only to hosts on the development allow-list", () => {
    expect(checkWebhookUrl("http://127.0.0.1:8080/hook", development).protocol).toBe("http:");
    expect(codeOf(() => checkWebhookUrl("http://hooks.example.com/hook", development))).toBe("URL_NOT_ALLOWED");
  });
});
