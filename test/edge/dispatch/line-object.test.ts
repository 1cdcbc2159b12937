import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { dispatchLineStub, taskStub } from "../../../edge/lib/stubs";

const at = (second: number) => new Date(Date.UTC(2026, 10, 21, 10, 0, second)).toISOString();

function newAccount() {
  const userId = `usr_${crypto.randomUUID()}`;
  const job = (i: number) => ({ task_id: `t${i}`, user_id: userId, created_at: at(i) });
  return { account: dispatchLineStub(env, userId), job };
}

describe("the dispatch line", () => {
  it("grants slots in submission order up to the cap and makes the rest wait", async () => {
    const { account, job } = newAccount();
    expect(await account.acquire([6, 5, 4, 3, 2, 1, 0].map(job))).toEqual(["t0", "t1", "t2", "t3", "t4"]);
    expect(await account.usage()).toEqual({ running: 5, waiting: 2, cap: 5 });
  });

  it("gives a freed slot to the oldest waiting task, not to a newer one that asks first", async () => {
    const { account, job } = newAccount();
    expect(await account.acquire([0, 1, 2, 3, 4, 5].map(job))).toHaveLength(5);
    expect(await account.acquire([job(6)])).toEqual([]);
    await account.release("t0");
    expect(await account.acquire([job(6)])).toEqual([]);
    expect(await account.acquire([job(5)])).toEqual(["t5"]);
  });

  it("keeps a task's slot when it asks again (a redelivered job)", async () => {
    const { account, job } = newAccount();
    expect(await account.acquire([job(0)])).toEqual(["t0"]);
    expect(await account.acquire([job(0)])).toEqual(["t0"]);
    expect(await account.usage()).toMatchObject({ running: 1, waiting: 0 });
  });

  it("takes back the slot of a task that found every transcoder busy and gives it to that task first", async () => {
    const { account, job } = newAccount();
    expect(await account.acquire([0, 1, 2, 3, 4].map(job))).toHaveLength(5);
    expect(await account.acquire([job(5)])).toEqual([]);
    await account.waitForCapacity(job(0));
    expect(await account.usage()).toEqual({ running: 4, waiting: 2, cap: 5 });
    expect(await account.acquire([job(5)])).toEqual([]);
    expect(await account.acquire([job(0)])).toEqual(["t0"]);
    expect(await account.usage()).toEqual({ running: 5, waiting: 1, cap: 5 });
  });

  it("wakes itself within seconds while a task waits for transcoder capacity, and after a minute otherwise", async () => {
    const { account, job } = newAccount();
    await account.acquire([job(0)]);
    const slow = await runInDurableObject(account, (_instance, state) => state.storage.getAlarm());
    await account.waitForCapacity(job(0));
    const soon = await runInDurableObject(account, (_instance, state) => state.storage.getAlarm());
    expect(slow! - Date.now()).toBeGreaterThan(30_000);
    expect(soon! - Date.now()).toBeLessThanOrEqual(5_000);
  });

  it("drops, at its next check, the slots of tasks that ended (or that no task object holds) without releasing them", async () => {
    const { account, job } = newAccount();
    const running = { ...job(0), task_id: `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}` };
    await taskStub(env, running.task_id).init(running);
    expect(await account.acquire([running, job(1), job(2)])).toHaveLength(3);
    await runInDurableObject(account, async (_instance, state) => {
      const line = await state.storage.get<{ recheck_at: number }>("line");
      await state.storage.put("line", { ...line, recheck_at: 0 });
    });
    expect(await runDurableObjectAlarm(account)).toBe(true);
    expect(await account.usage()).toMatchObject({ running: 1, waiting: 0 });
    expect(await account.acquire([running])).toEqual([running.task_id]);
  });
});
