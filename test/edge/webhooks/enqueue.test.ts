import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../../edge/lib/stubs";
import { findTaskById, insertTask } from "../../../edge/tasks/repository";
import { enqueueTaskEnded, sweepUnsentWebhooks } from "../../../edge/webhooks/enqueue";
import { WebhookEventSchema } from "../../../shared/schemas/webhooks";
import { originUrl } from "../files/fixtures";
import { originPaths } from "../files/origin";
import { createUser } from "../helpers";
import { hookUrl, received, receiverName, waitForDeliveries } from "./fixtures";

async function runningTask(webhookUrl: string) {
  const { userId } = await createUser();
  const taskId = `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const createdAt = new Date().toISOString();
  await insertTask(env.DB, { id: taskId, user_id: userId, command: "ffmpeg -i https://example.com/a.mp4 out.mp4", with_metadata: 0, webhook_url: webhookUrl, created_at: createdAt });
  const stub = taskStub(env, taskId);
  await stub.init({ task_id: taskId, user_id: userId, created_at: createdAt });
  await stub.report({ type: "started", seq: 0 });
  return { taskId, stub };
}

describe("the end of a task", () => {
  it("queues its event, which the webhooks consumer delivers", async () => {
    const name = receiverName();
    const { taskId, stub } = await runningTask(hookUrl(name));
    await stub.report({ type: "failed", seq: 1, error: "ffmpeg exited with code 1", error_code: "FFMPEG_FAILED" });
    const deliveries = await waitForDeliveries(taskId, (list) => list.some((d) => d.success));
    expect(deliveries).toMatchObject([{ attempt: 1, status_code: 200, success: true, redelivery: false }]);
    const [request] = await received(name);
    expect(request!.headers["webhook-event"]).toBe("task.failed");
    expect(WebhookEventSchema.parse(JSON.parse(request!.body))).toMatchObject({ task_id: taskId, status: "failed" });
  });

  it("is not held up by a receiver that hangs", async () => {
    const { taskId, stub } = await runningTask(originUrl(originPaths.hang()));
    await stub.failTask("CANCELED", "Canceled by the user.");
    expect((await findTaskById(env.DB, taskId))!.status).toBe("failed");
  });

  it("stands even when the event cannot be queued", async () => {
    const { taskId } = await runningTask(hookUrl(receiverName()));
    // Fault injection: a queue binding whose every send fails.
    const brokenQueue = { send: () => Promise.reject(new Error("queue unavailable")), sendBatch: () => Promise.reject(new Error("queue unavailable")) } as unknown as Queue;
    await expect(enqueueTaskEnded({ ...env, WEBHOOKS: brokenQueue }, taskId)).resolves.toBeUndefined();
  });
});

// Local queues deliver one batch at a time, and an earlier test leaves a receiver hanging for
// up to the 15 s delivery timeout: these tests allow for that wait.
describe("the webhook outbox sweep", { timeout: 40_000 }, () => {
  it("queues the event of a finished task whose enqueue never happened, once", async () => {
    const name = receiverName();
    const { taskId } = await runningTask(hookUrl(name));
    // The end reached D1 but the Durable Object died before queueing the event.
    await env.DB.prepare("UPDATE tasks SET status = 'failed', error = 'boom', error_code = 'FFMPEG_FAILED', finished_at = ? WHERE id = ?")
      .bind(new Date(Date.now() - 10 * 60_000).toISOString(), taskId)
      .run();

    expect(await sweepUnsentWebhooks(env)).toBeGreaterThanOrEqual(1);
    const deliveries = await waitForDeliveries(taskId, (list) => list.some((d) => d.success), 30_000);
    expect(deliveries.filter((d) => d.success)).toHaveLength(1);
    const row = await env.DB.prepare("SELECT webhook_enqueued_at FROM tasks WHERE id = ?").bind(taskId).first<{ webhook_enqueued_at: string | null }>();
    expect(row!.webhook_enqueued_at).not.toBeNull();
    const again = await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE id = ? AND webhook_enqueued_at IS NULL").bind(taskId).first<{ n: number }>();
    expect(again!.n).toBe(0);
  });

  it("leaves alone a task whose event was queued, and one that finished moments ago", async () => {
    const { taskId, stub } = await runningTask(hookUrl(receiverName()));
    await stub.failTask("FFMPEG_FAILED", "boom");
    await waitForDeliveries(taskId, (list) => list.length > 0, 30_000);
    const queued = await env.DB.prepare("SELECT webhook_enqueued_at FROM tasks WHERE id = ?").bind(taskId).first<{ webhook_enqueued_at: string | null }>();
    expect(queued!.webhook_enqueued_at).not.toBeNull();
    const fresh = await runningTask(hookUrl(receiverName()));
    await env.DB.prepare("UPDATE tasks SET status = 'failed', finished_at = ? WHERE id = ?").bind(new Date().toISOString(), fresh.taskId).run();
    const pending = await env.DB.prepare("SELECT id FROM tasks WHERE webhook_url IS NOT NULL AND webhook_enqueued_at IS NULL AND finished_at IS NOT NULL AND finished_at <= ?").bind(new Date(Date.now() - 2 * 60_000).toISOString()).all<{ id: string }>();
    expect(pending.results.map((r) => r.id)).not.toContain(fresh.taskId);
    expect(pending.results.map((r) => r.id)).not.toContain(taskId);
  });
});
