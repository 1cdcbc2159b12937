import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../../edge/lib/stubs";
import type { TaskObject } from "../../../edge/tasks/task-object";
import { findTaskById, insertTask } from "../../../edge/tasks/repository";
import { OUTBOX_KEY } from "../../../edge/webhooks/handover";
import { WebhookEventSchema } from "../../../shared/schemas/webhooks";
import { originUrl } from "../files/fixtures";
import { originPaths } from "../files/origin";
import { api, createUser } from "../helpers";
import { hookUrl, received, receiverName, waitForDeliveries } from "./fixtures";

async function runningTask(webhookUrl: string) {
  const { userId, key } = await createUser();
  const taskId = `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const createdAt = new Date().toISOString();
  const command = "ffmpeg -i https://example.com/a.mp4 out.mp4";
  await insertTask(env.DB, { id: taskId, user_id: userId, command, with_metadata: 0, webhook_url: webhookUrl, created_at: createdAt });
  const stub = taskStub(env, taskId);
  await stub.init({ task_id: taskId, user_id: userId, created_at: createdAt }, { command, with_metadata: false, webhook_url: webhookUrl });
  await stub.report({ type: "started", seq: 0 });
  return { taskId, stub, key };
}

const outbox = (stub: DurableObjectStub<TaskObject>) => runInDurableObject(stub, (_instance, state) => state.storage.get(OUTBOX_KEY));

describe("the end of a task", () => {
  it("hands its event to the receiver, which delivers the task exactly as GET /v1/tasks/{id} shows it", async () => {
    const name = receiverName();
    const { taskId, stub, key } = await runningTask(hookUrl(name));
    await stub.report({ type: "failed", seq: 1, error: "ffmpeg exited with code 1", error_code: "FFMPEG_FAILED" });
    const deliveries = await waitForDeliveries(taskId, (list) => list.some((d) => d.success));
    expect(deliveries).toMatchObject([{ attempt: 1, status_code: 200, success: true, redelivery: false }]);
    const [request] = await received(name);
    expect(request!.headers["webhook-event"]).toBe("task.failed");
    expect(request!.headers["webhook-id"]).toBe(`msg_${taskId}_failed`);
    expect(WebhookEventSchema.parse(JSON.parse(request!.body))).toMatchObject({ task_id: taskId, status: "failed" });
    expect(JSON.parse(request!.body)).toEqual(await (await api(`/v1/tasks/${taskId}`, key)).json());
    expect(await outbox(stub)).toBeUndefined();
  });

  it("is not held up by a receiver that hangs", async () => {
    const { taskId, stub } = await runningTask(originUrl(originPaths.hang()));
    await stub.failTask("CANCELED", "Canceled by the user.");
    expect((await findTaskById(env.DB, taskId))!.status).toBe("failed");
  });

  it("stands when the hand-over fails, keeps the event in its outbox and hands it over from its alarm", async () => {
    const name = receiverName();
    const { taskId, stub } = await runningTask(hookUrl(name));
    await runInDurableObject(stub, async (instance) => {
      // Fault injection: the receivers' namespace is unreachable while the task ends.
      const object = instance as unknown as { env: Env };
      const real = object.env;
      object.env = { ...real, WEBHOOK_RECEIVERS: { idFromName: () => { throw new Error("receivers unavailable"); } } as unknown as Env["WEBHOOK_RECEIVERS"] };
      try {
        await instance.failTask("FFMPEG_FAILED", "boom");
      } finally {
        object.env = real;
      }
    });
    expect((await findTaskById(env.DB, taskId))!.status).toBe("failed");
    expect(await outbox(stub)).toMatchObject({ task_id: taskId, event: { id: `msg_${taskId}_failed` } });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    await waitForDeliveries(taskId, (list) => list.some((d) => d.success));
    expect(await outbox(stub)).toBeUndefined();
  });
});
