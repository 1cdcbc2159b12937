import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { handOver, receiverStub } from "../../../edge/webhooks/handover";
import { listDeliveries } from "../../../edge/webhooks/delivery";
import { originUrl } from "../files/fixtures";
import { originPaths } from "../files/origin";
import { endedTask, handover, hookUrl, received, receiverName, waitForDeliveries } from "./fixtures";

describe("a webhook receiver's object", () => {
  it("takes over an event at once, without waiting for the receiver", async () => {
    const url = originUrl(originPaths.hang());
    const hanging = await endedTask(url);
    const started = Date.now();
    await handOver(env, await handover(hanging.taskId));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await receiverStub(env, url).pending()).toBeGreaterThanOrEqual(1);
  });

  it("delivers to a healthy receiver while another receiver hangs", async () => {
    const hanging = await endedTask(originUrl(originPaths.hang()));
    const name = receiverName();
    const healthy = await endedTask(hookUrl(name, 204));
    await handOver(env, await handover(hanging.taskId));
    await handOver(env, await handover(healthy.taskId));
    // The receivers' alarms fire by themselves; the hanging one holds only its own object.
    const [delivery] = await waitForDeliveries(healthy.taskId, (deliveries) => deliveries.length === 1);
    expect(delivery).toMatchObject({ attempt: 1, status_code: 204, success: true });
    expect(await received(name)).toHaveLength(1);
    expect(await listDeliveries(env.DB, hanging.taskId)).toEqual([]);
  });

  it("retries a failing receiver on its own schedule, recording each attempt", async () => {
    const url = hookUrl(receiverName(), 500);
    const failing = await endedTask(url);
    await handOver(env, await handover(failing.taskId));
    const [delivery] = await waitForDeliveries(failing.taskId, (deliveries) => deliveries.length === 1);
    expect(delivery).toMatchObject({ attempt: 1, status_code: 500, success: false });
    expect(await receiverStub(env, url).pending()).toBe(1);
  });

  it("takes a repeated hand-over of a pending event only once, and each redelivery as its own attempt", async () => {
    const url = hookUrl(receiverName(), 500);
    const failing = await endedTask(url);
    const event = await handover(failing.taskId);
    await handOver(env, event);
    await handOver(env, { ...event, first_attempt_at: new Date(Date.now() + 1).toISOString() });
    expect(await receiverStub(env, url).pending()).toBe(1);
    await handOver(env, { ...event, redelivery: true });
    expect(await receiverStub(env, url).pending()).toBe(2);
  });

  it("makes the first attempt on the hand-over itself and, once it succeeds, keeps no alarm", async () => {
    const name = receiverName();
    const url = hookUrl(name, 204);
    const healthy = await endedTask(url);
    await handOver(env, await handover(healthy.taskId));
    await waitForDeliveries(healthy.taskId, (deliveries) => deliveries.length === 1);
    const deadline = Date.now() + 10_000;
    while ((await receiverStub(env, url).pending()) > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await receiverStub(env, url).pending()).toBe(0);
    expect(await runInDurableObject(receiverStub(env, url), (_instance, state) => state.storage.getAlarm())).toBeNull();
  });

  it("takes over from its alarm an attempt that never finished (the object was evicted during it)", async () => {
    const name = receiverName();
    const url = hookUrl(name, 204);
    const task = await endedTask(url);
    const event = await handover(task.taskId);
    const stub = receiverStub(env, url);
    // What an eviction in the middle of the first attempt leaves: the event, its lease run out.
    await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.put(`event:${event.event.id}`, { handover: event, attempts: 0, due: Date.now() - 1 });
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await listDeliveries(env.DB, task.taskId)).toMatchObject([{ attempt: 1, status_code: 204, success: true }]);
    expect(await received(name)).toHaveLength(1);
  });

  it("drops a malformed hand-over", async () => {
    const url = hookUrl(receiverName());
    await receiverStub(env, url).accept({ task: "nope" });
    expect(await receiverStub(env, url).pending()).toBe(0);
  });
});
