import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { accountStub } from "../../../edge/lib/stubs";

const at = (second: number) => new Date(Date.UTC(2026, 10, 21, 10, 0, second)).toISOString();

describe("AccountObject running-task cap", () => {
  it("grants slots in submission order up to the cap and makes the rest wait", async () => {
    const account = accountStub(env, `usr_${crypto.randomUUID()}`);
    for (let i = 0; i < 7; i++) await account.enqueue(`t${i}`, at(i));
    expect(await account.acquire("t6", at(6))).toBe(false);
    for (let i = 0; i < 5; i++) expect(await account.acquire(`t${i}`, at(i))).toBe(true);
    expect(await account.acquire("t5", at(5))).toBe(false);
    expect(await account.usage()).toEqual({ running: 5, waiting: 2, cap: 5 });
  });

  it("gives a freed slot to the oldest waiting task, not to a newer one that asks first", async () => {
    const account = accountStub(env, `usr_${crypto.randomUUID()}`);
    for (let i = 0; i < 7; i++) await account.enqueue(`t${i}`, at(i));
    for (let i = 0; i < 5; i++) await account.acquire(`t${i}`, at(i));
    await account.release("t0");
    expect(await account.acquire("t6", at(6))).toBe(false);
    expect(await account.acquire("t5", at(5))).toBe(true);
  });

  it("keeps a task's slot when it asks again (a redelivered job)", async () => {
    const account = accountStub(env, `usr_${crypto.randomUUID()}`);
    expect(await account.acquire("t0", at(0))).toBe(true);
    expect(await account.acquire("t0", at(0))).toBe(true);
    expect(await account.usage()).toMatchObject({ running: 1, waiting: 0 });
  });
});
