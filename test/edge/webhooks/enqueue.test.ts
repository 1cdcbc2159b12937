import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../../edge/lib/stubs";
import { findTaskById, insertTask } from "../../../edge/tasks/repository";
import { enqueueTaskEnded } from "../../../edge/webhooks/enqueue";
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
    expect(WebhookEventSchema.parse(JSON.parse(request!.body))).toMatchObject({ type: "task.failed", data: { task_id: taskId, status: "failed" } });
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
