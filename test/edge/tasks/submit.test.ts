import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { taskStub } from "../../../edge/lib/stubs";
import { liveState } from "../../../edge/tasks/live-state";
import { findTaskById } from "../../../edge/tasks/repository";
import { submitTask } from "../../../edge/tasks/submit";
import { createUser } from "../helpers";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -t 2 out.mp4";

describe("submitTask", () => {
  it("records the task, starts its object with the job as submitted and a time limit within the quota, and leaves it pending", async () => {
    const { userId } = await createUser();
    const created = await submitTask({ ...env, DAILY_TASK_SECONDS: "100" }, userId, { command: COMMAND, with_metadata: true, timeout_seconds: 30 });
    expect(created).toEqual({ task_id: expect.stringMatching(/^tsk_[0-9a-f]{24}$/), status: "pending", created_at: expect.any(String) });
    expect(await findTaskById(env.DB, created.task_id)).toMatchObject({ user_id: userId, command: COMMAND, with_metadata: 1, status: "pending", time_limit_seconds: 30 });
    expect(await liveState(env, created.task_id)).toMatchObject({ status: "pending", user_id: userId, time_limit_seconds: 30 });
    await runInDurableObject(taskStub(env, created.task_id), async (_instance, state) => {
      expect(await state.storage.get("job")).toEqual({ command: COMMAND, with_metadata: true, webhook_url: null });
    });
  });

  it("refuses a task the day's quota cannot hold with QUOTA_EXCEEDED until 00:00 UTC, recording nothing", async () => {
    const { userId } = await createUser();
    const tight = { ...env, DAILY_TASK_SECONDS: "10" };
    await submitTask(tight, userId, { command: COMMAND, with_metadata: false, timeout_seconds: 10 });
    const now = new Date("2026-03-01T23:00:00.000Z");
    const refusal = await submitTask(tight, userId, { command: COMMAND, with_metadata: false }, now).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: "QUOTA_EXCEEDED", extra: { retry_after: 3600 } });
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE user_id = ?").bind(userId).first<{ n: number }>()).toEqual({ n: 1 });
  });

  it("refuses a command the policy refuses before recording anything", async () => {
    const { userId } = await createUser();
    await expect(submitTask(env, userId, { command: "ffmpeg -i /etc/passwd out.mp4", with_metadata: false })).rejects.toBeInstanceOf(AppError);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE user_id = ?").bind(userId).first<{ n: number }>()).toEqual({ n: 0 });
  });
});
