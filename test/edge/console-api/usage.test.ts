import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectProblem } from "../../helpers/problems";
import { ConsoleClient, signedInUser } from "./client";

describe("GET /console/api/usage", () => {
  it("gives tasks and processing seconds per UTC day, oldest first, zeros included, with storage and limits", async () => {
    const { client, userId } = await signedInUser();
    const now = Date.now();
    const day = 86_400_000;
    const insert = env.DB.prepare("INSERT INTO tasks (id, user_id, command, status, created_at, started_at, finished_at) VALUES (?, ?, 'x', 'completed', ?, ?, ?)");
    await env.DB.batch([
      insert.bind(`tsk_u1${now}`, userId, new Date(now - 20_000).toISOString(), new Date(now - 12_500).toISOString(), new Date(now - 10_000).toISOString()),
      insert.bind(`tsk_u2${now}`, userId, new Date(now - 2 * day).toISOString(), new Date(now - 2 * day).toISOString(), new Date(now - 2 * day + 4_000).toISOString()),
      insert.bind(`tsk_u3${now}`, userId, new Date(now - 40 * day).toISOString(), new Date(now - 40 * day).toISOString(), new Date(now - 40 * day + 4_000).toISOString()),
      env.DB.prepare("INSERT INTO files (key, user_id, kind, size, content_type, created_at, expires_at) VALUES (?, ?, 'upload', 1234, 'video/mp4', ?, ?)").bind(`uploads/${userId}/usage.mp4`, userId, new Date(now).toISOString(), new Date(now + day).toISOString()),
    ]);
    const response = await client.fetch("/console/api/usage?days=30");
    expect(response.status).toBe(200);
    const usage = await response.json<{ days: { date: string; tasks: number; seconds: number }[]; storage_bytes: number; running_tasks: number; waiting_tasks: number; limits: Record<string, unknown> }>();
    expect(usage.days).toHaveLength(30);
    expect(usage.days.at(-1)!.date).toBe(new Date(now).toISOString().slice(0, 10));
    const byDate = new Map(usage.days.map((entry) => [entry.date, entry]));
    const today = byDate.get(new Date(now).toISOString().slice(0, 10))!;
    // The task that finished 10 s ago may have been created yesterday only if the test runs at midnight.
    expect(today.seconds + (byDate.get(new Date(now - day).toISOString().slice(0, 10))?.seconds ?? 0)).toBeCloseTo(2.5, 1);
    expect(byDate.get(new Date(now - 2 * day).toISOString().slice(0, 10))).toMatchObject({ tasks: 1, seconds: 4 });
    expect(usage.days.reduce((sum, entry) => sum + entry.tasks, 0)).toBe(2);
    expect(usage.storage_bytes).toBe(1234);
    expect(usage).toMatchObject({ running_tasks: 0, waiting_tasks: 0 });
    expect(usage.limits).toEqual({ max_running_tasks: 5, rate_limit: { requests: 200, period_seconds: 10 }, max_upload_bytes: 160 * 1024 * 1024, task_timeout_seconds: 600, file_ttl_seconds: 86_400, daily_task_seconds: 36_000 });
  });

  it("reports the daily processing quota as submissions count it, and the task it runs out on is refused with 429 QUOTA_EXCEEDED", async () => {
    const { client, userId } = await signedInUser();
    const now = Date.now();
    const insert = env.DB.prepare("INSERT INTO tasks (id, user_id, command, status, created_at, started_at, finished_at, time_limit_seconds) VALUES (?, ?, 'x', ?, ?, ?, ?, ?)");
    await env.DB.batch([
      insert.bind(`tsk_q1${now}`, userId, "completed", new Date(now - 6_000).toISOString(), new Date(now - 5_000).toISOString(), new Date(now - 2_500).toISOString(), 600),
      insert.bind(`tsk_q2${now}`, userId, "running", new Date(now - 1_000).toISOString(), new Date(now - 1_000).toISOString(), null, 600),
    ]);
    const quota = async () => (await (await client.fetch("/console/api/usage?days=1")).json<{ daily_quota: Record<string, unknown> }>()).daily_quota;
    const tomorrow = new Date(now + 86_400_000).toISOString().slice(0, 10);
    expect(await quota()).toEqual({ limit_seconds: 36_000, processed_seconds: 2.5, reserved_seconds: 600, remaining_seconds: 35_397.5, resets_at: `${tomorrow}T00:00:00.000Z` });

    await env.DB.prepare("UPDATE tasks SET time_limit_seconds = 35997 WHERE id = ?").bind(`tsk_q2${now}`).run();
    expect(await quota()).toMatchObject({ reserved_seconds: 35_997, remaining_seconds: 0.5 });
    await expectProblem(await client.fetch("/console/api/v1/tasks", { json: { command: "-i https://example.com/in.mp4 out.mp4" } }), 429, "QUOTA_EXCEEDED");
  });

  it("refuses days outside 1-90 and answers 401 without a session", async () => {
    const { client } = await signedInUser();
    await expectProblem(await client.fetch("/console/api/usage?days=91"), 400, "VALIDATION_FAILED");
    await expectProblem(await new ConsoleClient().fetch("/console/api/usage"), 401, "UNAUTHORIZED");
  });
});
