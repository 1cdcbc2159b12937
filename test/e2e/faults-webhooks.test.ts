import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack, authed, uploadLocalFile } from "../../scripts/lib/local-stack";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { submitTask, waitForEnd } from "./helpers";
import { WebhookReceiver } from "./webhook-receiver";

interface Delivery {
  attempt: number;
  status_code: number | null;
  success: boolean;
  error: string | null;
}

describe("webhook receivers that are slow or down, next to a healthy one", () => {
  let stack: Stack;
  let receiver: WebhookReceiver;
  let key: string;
  let clipUrl: string;
  beforeAll(async () => {
    // A long attempt timeout: the slow receiver's attempt stays open for the whole test.
    stack = await Stack.start({ edgeVars: { WEBHOOK_TIMEOUT_SECONDS: "120", WEBHOOK_RETRY_SCHEDULE_SECONDS: "1" } });
    receiver = await new WebhookReceiver().listen();
    ({ key } = await stack.createUser());
    clipUrl = (await uploadLocalFile(stack, key, await makeClip(await mediaDir(), "clip.mp4", { seconds: 2 }))).url;
  }, 120_000);
  afterAll(async () => {
    await receiver?.close();
    await stack?.stop();
  });

  async function taskWithWebhook(webhook: string): Promise<string> {
    const response = await submitTask(stack, key, { command: `ffmpeg -i ${clipUrl} -t 1 -c copy out.mp4`, webhook });
    expect(response.status).toBe(201);
    const { task_id } = (await response.json()) as { task_id: string };
    const { task } = await waitForEnd(stack, key, task_id, 120_000);
    expect(task.status, task.error).toBe("completed");
    return task_id;
  }

  async function deliveries(taskId: string): Promise<Delivery[]> {
    return ((await (await stack.fetch(`/v1/tasks/${taskId}/webhooks`, authed(key))).json()) as { deliveries: Delivery[] }).deliveries;
  }

  async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 60_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`never matched: ${JSON.stringify(value)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it("delivers to the healthy receiver while another hangs and a third is down", async () => {
    const slow = await taskWithWebhook(receiver.script("/slow", ["hang"]));
    await until(async () => receiver.received("/slow").length, (count) => count === 1);
    // Nothing listens on port 9: every attempt to this receiver fails at once and is retried.
    const down = await taskWithWebhook("http://127.0.0.1:9/down");
    const healthy = await taskWithWebhook(receiver.url("/healthy"));

    const [delivered] = await until(() => deliveries(healthy), (log) => log.some((delivery) => delivery.success));
    expect(delivered).toMatchObject({ attempt: 1, status_code: 200, success: true });
    expect(receiver.received("/healthy")).toHaveLength(1);
    // The slow receiver's first attempt is still open: nothing of it is recorded yet.
    expect(await deliveries(slow)).toEqual([]);
    const failures = await until(() => deliveries(down), (log) => log.length >= 2);
    expect(failures.every((delivery) => !delivery.success && /^URL_UNREACHABLE/.test(delivery.error ?? ""))).toBe(true);
  }, 300_000);
});
