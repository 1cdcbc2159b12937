import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sweepUndeliveredWebhooks } from "../../../edge/tasks/webhook-event";
import { listDeliveries } from "../../../edge/webhooks/delivery";
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
