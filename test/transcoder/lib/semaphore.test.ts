import { describe, expect, it } from "vitest";
import { Semaphore } from "../../../transcoder/lib/semaphore";

describe("Semaphore", () => {
  it("lets at most `size` holders in and hands a freed slot to the oldest waiter", async () => {
    const slots = new Semaphore(2);
    const order: string[] = [];
    const a = await slots.acquire();
    const b = await slots.acquire();
    const c = slots.acquire().then((release) => (order.push("c"), release));
    const d = slots.acquire().then((release) => (order.push("d"), release));
    expect(slots.inUse).toBe(2);
    a();
    (await c)();
    b();
    (await d)();
    expect(order).toEqual(["c", "d"]);
    expect(slots.inUse).toBe(0);
  });

  it("gives up waiting when the waiter's signal aborts, without taking a slot", async () => {
    const slots = new Semaphore(1);
    const release = await slots.acquire();
    const controller = new AbortController();
    const waiting = slots.acquire(controller.signal);
    controller.abort(new Error("canceled"));
    await expect(waiting).rejects.toThrow("canceled");
    release();
    expect(slots.inUse).toBe(0);
    (await slots.acquire())();
  });

  it("ignores a second release of the same slot", async () => {
    const slots = new Semaphore(1);
    const release = await slots.acquire();
    release();
    release();
    expect(slots.inUse).toBe(0);
  });
});
