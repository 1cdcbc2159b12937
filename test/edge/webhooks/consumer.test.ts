import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { deliverWebhooks, receiverStub } from "../../../edge/webhooks/consumer";
import { listDeliveries } from "../../../edge/webhooks/deliveries";
import { originUrl } from "../files/fixtures";
import { originPaths } from "../files/origin";
import { endedTask, hookUrl, message, received, receiverName, waitForDeliveries } from "./fixtures";

async function consume(bodies: { id: string; body: unknown }[]) {
  const batch = createMessageBatch("ffedge-webhooks", bodies.map(({ id, body }) => ({ id, timestamp: new Date(), attempts: 1, body })));
  const ctx = createExecutionContext();
  await deliverWebhooks(batch, env);
  return getQueueResult(batch, ctx);
}

describe("webhooks queue consumer", () => {
  it("hands every event to its receiver's object and acknowledges it without waiting for the receiver", async () => {
    const hanging = await endedTask(originUrl(originPaths.hang()));
    const result = await consume([{ id: "m-hang", body: message(hanging.taskId) }]);
    expect(result.explicitAcks).toEqual(["m-hang"]);
    expect(result.retryMessages).toEqual([]);
    expect(await receiverStub(env, originUrl(originPaths.hang())).pending()).toBeGreaterThanOrEqual(1);
  });

  it("delivers to a healthy receiver while another receiver hangs", async () => {
    const hanging = await endedTask(originUrl(originPaths.hang()));
    const name = receiverName();
    const healthy = await endedTask(hookUrl(name, 204));
    await consume([{ id: "m-slow", body: message(hanging.taskId) }, { id: "m-fast", body: message(healthy.taskId) }]);
    // The receivers' alarms fire by themselves; the hanging one holds only its own object.
    const [delivery] = await waitForDeliveries(healthy.taskId, (deliveries) => deliveries.length === 1);
    expect(delivery).toMatchObject({ attempt: 1, status_code: 204, success: true });
    expect(await received(name)).toHaveLength(1);
    expect(await listDeliveries(env.DB, hanging.taskId)).toEqual([]);
  });

  it("retries a failing receiver on its own object's schedule, recording each attempt", async () => {
    const url = hookUrl(receiverName(), 500);
    const failing = await endedTask(url);
    await consume([{ id: "m-500", body: message(failing.taskId) }]);
    const [delivery] = await waitForDeliveries(failing.taskId, (deliveries) => deliveries.length === 1);
    expect(delivery).toMatchObject({ attempt: 1, status_code: 500, success: false });
    expect(await receiverStub(env, url).pending()).toBe(1);
  });

  it("hands over a repeated queue delivery of the same event only once", async () => {
    const url = hookUrl(receiverName(), 500);
    const failing = await endedTask(url);
    await consume([{ id: "m-twice", body: message(failing.taskId) }]);
    await consume([{ id: "m-twice", body: message(failing.taskId) }]);
    expect(await receiverStub(env, url).pending()).toBe(1);
  });

  it("drops a malformed message", async () => {
    expect((await consume([{ id: "m-bad", body: { task: "nope" } }])).explicitAcks).toEqual(["m-bad"]);
  });
});
