import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sweepUndeliveredWebhooks } from "../../../edge/tasks/webhook-event";
import { listDeliveries } from "../../../edge/webhooks/delivery";
import { createDestination } from "../../../edge/destinations/manage";
import { acceptReport } from "../../../edge/tasks/reports";
import { submitTask } from "../../../edge/tasks/submit";
import { CreateDestinationSchema } from "../../../shared/schemas/destinations";
import { destinationBody } from "../destinations/fixtures";
import { api, createUser } from "../helpers";
import { endedTask, hookUrl, received, receiverName, waitForDeliveries } from "../webhooks/fixtures";

describe("the webhook sweep", () => {
  it("hands over the event of a task that ended without its object's hand-over, once", async () => {
    const name = receiverName();
    const { taskId } = await endedTask(hookUrl(name));
    // The end reached D1 but the Durable Object died before storing it.
    await env.DB.prepare("UPDATE tasks SET finished_at = ? WHERE id = ?").bind(new Date(Date.now() - 10 * 60_000).toISOString(), taskId).run();
    expect(await sweepUndeliveredWebhooks(env)).toBeGreaterThanOrEqual(1);
    const deliveries = await waitForDeliveries(taskId, (list) => list.some((d) => d.success));
    expect(deliveries.filter((d) => d.success)).toHaveLength(1);
    await sweepUndeliveredWebhooks(env);
    expect(await received(name)).toHaveLength(1);
  });

  it("leaves alone a task whose event has been attempted, one that ended moments ago, and one past the 24 h window", async () => {
    const name = receiverName();
    const attempted = await endedTask(hookUrl(name, 500));
    const fresh = await endedTask(hookUrl(name));
    const old = await endedTask(hookUrl(name));
    await env.DB.prepare("UPDATE tasks SET finished_at = ? WHERE id = ?").bind(new Date(Date.now() - 10 * 60_000).toISOString(), attempted.taskId).run();
    await env.DB.prepare("UPDATE tasks SET finished_at = ? WHERE id = ?").bind(new Date(Date.now() - 25 * 3600_000).toISOString(), old.taskId).run();
    await env.DB.prepare("INSERT INTO webhook_deliveries (webhook_id, task_id, user_id, attempt, redelivery, url, attempted_at, status_code, latency_ms, success, error) VALUES (?, ?, ?, 1, 0, ?, ?, 500, 5, 0, 'x')")
      .bind(`msg_${attempted.taskId}_failed`, attempted.taskId, attempted.userId, hookUrl(name, 500), new Date().toISOString()).run();
    await sweepUndeliveredWebhooks(env);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await received(name)).toEqual([]);
    for (const taskId of [fresh.taskId, old.taskId]) expect(await listDeliveries(env.DB, taskId)).toEqual([]);
  });
});

describe("a task's end event", () => {
  it("is the task exactly as GET shows it, for a retry that delivers to a destination too (retry_of, destination)", async () => {
    const { userId, key } = await createUser();
    const destination = await createDestination(env, userId, CreateDestinationSchema.parse(destinationBody()));
    const name = receiverName();
    const first = await submitTask(env, userId, { command: "ffmpeg -i https://example.com/in.mp4 out.mp4", with_metadata: false });
    const { task_id: taskId } = await submitTask(env, userId, { command: "ffmpeg -i https://example.com/in.mp4 out.mp4", with_metadata: false, webhook: hookUrl(name, 204), destination: { id: destination.id, mode: "copy" } }, new Date(), first.task_id);
    await acceptReport(env, { taskId, userId, run: 0 }, { type: "failed", seq: 0, error: "ffmpeg exited with 1", error_code: "FFMPEG_FAILED" });
    const deadline = Date.now() + 10_000;
    while ((await received(name)).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const [request] = await received(name);
    const body = JSON.parse(request!.body);
    expect(body).toMatchObject({ task_id: taskId, retry_of: first.task_id, destination: { id: destination.id, mode: "copy" } });
    expect(body).toEqual(await (await api(`/v1/tasks/${taskId}`, key)).json());
  });
});
