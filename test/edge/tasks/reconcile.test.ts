import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../../edge/lib/stubs";
import { liveState } from "../../../edge/tasks/live-state";
import { reconcileUnfinishedTasks } from "../../../edge/tasks/reconcile";
import { insertTask } from "../../../edge/tasks/repository";
import { createUser } from "../helpers";

async function oldTask(minutesAgo: number) {
  const { userId } = await createUser();
  const taskId = `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const createdAt = new Date(Date.now() - minutesAgo * 60_000).toISOString();
  await insertTask(env.DB, { id: taskId, user_id: userId, command: "-i https://example.com/a.mp4 out.mp4", with_metadata: 0, webhook_url: null, created_at: createdAt });
  return { taskId, userId, createdAt };
}

describe("cron reconciler", () => {
  it("gives a pending task whose object has no state a fresh start, and re-arms a missing alarm", async () => {
    const orphan = await oldTask(5);
    const unarmed = await oldTask(5);
    await taskStub(env, unarmed.taskId).init({ task_id: unarmed.taskId, user_id: unarmed.userId, created_at: unarmed.createdAt });
    await runInDurableObject(taskStub(env, unarmed.taskId), (_instance, state) => state.storage.deleteAlarm());
    expect(await reconcileUnfinishedTasks(env)).toBeGreaterThanOrEqual(2);
    expect(await liveState(env, orphan.taskId)).toMatchObject({ status: "pending", dispatch: "queued", user_id: orphan.userId });
    // The job comes back from the D1 record too, so the fresh start can be dispatched.
    await runInDurableObject(taskStub(env, orphan.taskId), async (_instance, state) => {
      expect(await state.storage.get("job")).toEqual({ command: "-i https://example.com/a.mp4 out.mp4", with_metadata: false, webhook_url: null });
    });
    await runInDurableObject(taskStub(env, unarmed.taskId), async (_instance, state) => {
      expect(await state.storage.getAlarm()).not.toBeNull();
    });
  });

  it("leaves tasks younger than two minutes to their own alarms", async () => {
    const young = await oldTask(0);
    await reconcileUnfinishedTasks(env);
    expect(await liveState(env, young.taskId)).toBeUndefined();
  });
});
