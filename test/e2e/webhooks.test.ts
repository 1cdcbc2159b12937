import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebhookEventSchema } from "../../shared/schemas/webhooks";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { getTask, submitTask, waitForEnd } from "./helpers";
import { Stack, authed, uploadLocalFile } from "../../scripts/lib/local-stack";
import { type ReceivedRequest, WebhookReceiver } from "./webhook-receiver";

interface Delivery {
  attempt: number;
  status_code: number | null;
  latency_ms: number | null;
  success: boolean;
  error: string | null;
}

let stack: Stack;
let receiver: WebhookReceiver;
let user: { key: string; userId: string };
let secret: string;
let clipUrl: string;

beforeAll(async () => {
  // Short attempt timeout and 1 s retries, so a test sees several attempts in seconds.
  stack = await Stack.start({ edgeVars: { WEBHOOK_TIMEOUT_SECONDS: "1", WEBHOOK_RETRY_SCHEDULE_SECONDS: "1" } });
  receiver = await new WebhookReceiver().listen();
  user = await stack.createUser();
  // The first rotation creates the user's secret: every delivery below is signed with it alone.
  secret = ((await (await stack.fetch("/v1/webhook-secret/rotate", authed(user.key, { method: "POST" }))).json()) as { secret: string }).secret;
  clipUrl = (await uploadLocalFile(stack, user.key, await makeClip(await mediaDir(), "clip.mp4", { seconds: 2 }))).url;
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

async function completedTaskWithWebhook(webhook: string): Promise<string> {
  const response = await submitTask(stack, user.key, { command: `ffmpeg -i ${clipUrl} -t 1 -c copy out.mp4`, webhook });
  expect(response.status).toBe(201);
  const { task_id } = (await response.json()) as { task_id: string };
  const { task } = await waitForEnd(stack, user.key, task_id, 30_000);
  expect(task.status, task.error).toBe("completed");
  return task_id;
}

/** Polls the task's webhook log until `done` holds. */
async function deliveriesUntil(taskId: string, done: (deliveries: Delivery[]) => boolean, timeoutMs = 30_000): Promise<Delivery[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const body = (await (await stack.fetch(`/v1/tasks/${taskId}/webhooks`, authed(user.key))).json()) as { deliveries: Delivery[] };
    if (done(body.deliveries)) return body.deliveries;
    if (Date.now() > deadline) throw new Error(`webhook log of ${taskId} never matched: ${JSON.stringify(body.deliveries)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const succeeded = (deliveries: Delivery[]) => deliveries.some((delivery) => delivery.success);

function verified(request: ReceivedRequest) {
  const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
  return WebhookEventSchema.parse(new Webhook(secret).verify(request.body, headers));
}

describe("webhook delivery on the local stack", () => {
  it("retries a receiver that fails twice, then delivers one signed event with the same webhook-id", async () => {
    const url = receiver.script("/flaky", [{ status: 500 }, { status: 500 }, { status: 200 }]);
    const taskId = await completedTaskWithWebhook(url);

    const deliveries = await deliveriesUntil(taskId, succeeded);
    expect(deliveries.map((d) => [d.attempt, d.status_code, d.success])).toEqual([[1, 500, false], [2, 500, false], [3, 200, true]]);
    expect(deliveries.every((d) => d.latency_ms !== null && d.latency_ms >= 0)).toBe(true);

    const requests = receiver.received("/flaky");
    expect(requests).toHaveLength(3);
    const events = requests.map(verified);
    expect(new Set(requests.map((r) => r.headers["webhook-id"]))).toEqual(new Set([`msg_${taskId}_completed`]));
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    expect(requests[0]!.headers["webhook-event"]).toBe("task.completed");
    expect(events[0]).toEqual(await getTask(stack, user.key, taskId));
  });

  it("counts a 302 as a failed attempt and never follows it", async () => {
    const url = receiver.script("/moved", [{ status: 302, location: receiver.url("/followed") }]);
    const taskId = await completedTaskWithWebhook(url);

    const deliveries = await deliveriesUntil(taskId, succeeded);
    expect(deliveries.map((d) => [d.status_code, d.success])).toEqual([[302, false], [200, true]]);
    expect(deliveries[0]!.error).toMatch(/redirects are not followed/);
    expect(receiver.received("/followed")).toEqual([]);
    expect(receiver.received("/moved").map(verified)).toHaveLength(2);
  });

  it("times out a receiver that hangs and retries it", async () => {
    const url = receiver.script("/slow", ["hang"]);
    const taskId = await completedTaskWithWebhook(url);

    const deliveries = await deliveriesUntil(taskId, succeeded);
    expect(deliveries).toHaveLength(2);
    expect(deliveries[0]).toMatchObject({ status_code: null, success: false, error: expect.stringMatching(/^URL_TIMEOUT/) });
    expect(deliveries[0]!.latency_ms).toBeGreaterThanOrEqual(1000);
    expect(deliveries[1]).toMatchObject({ status_code: 200, success: true });
    expect(new Set(receiver.received("/slow").map((r) => r.headers["webhook-id"])).size).toBe(1);
  });

  it("completes the task while the receiver is down, and delivers once it is back", async () => {
    // "Down" is a 503 from the receiver's front end. A refused connection is covered by the edge
    // tests instead: here, a fetch to a closed local port sometimes makes Miniflare's local queue
    // lose the pending retry (about one run in five), which Cloudflare Queues does not do.
    const url = receiver.script("/back", Array.from({ length: 1000 }, () => ({ status: 503 })));
    const taskId = await completedTaskWithWebhook(url);

    const failures = await deliveriesUntil(taskId, (list) => list.length >= 2);
    expect(failures.every((d) => !d.success && d.status_code === 503)).toBe(true);

    receiver.script("/back", []);
    const deliveries = await deliveriesUntil(taskId, succeeded);
    expect(deliveries.at(-1)).toMatchObject({ status_code: 200, success: true });
    expect(new Set(receiver.received("/back").map((request) => verified(request).task_id))).toEqual(new Set([taskId]));
  });

  it("redelivers a finished task's event on request", async () => {
    const url = receiver.script("/again", []);
    const taskId = await completedTaskWithWebhook(url);
    await deliveriesUntil(taskId, succeeded);

    const response = await stack.fetch(`/v1/tasks/${taskId}/webhooks/redeliver`, authed(user.key, { method: "POST" }));
    expect(response.status).toBe(202);
    await deliveriesUntil(taskId, (list) => list.length === 2 && list[1]!.success);
    const [first, again] = receiver.received("/again");
    expect(again!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(verified(again!)).toEqual(verified(first!));
  });
});
