import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../../edge/index";
import { sweepExpiredFiles } from "../../../edge/files/sweep";
import { createUser } from "../helpers";
import { seedFile } from "./fixtures";

const HOUR = 3_600_000;

async function exists(key: string): Promise<{ object: boolean; row: boolean }> {
  const row = await env.DB.prepare("SELECT 1 AS one FROM files WHERE key = ?").bind(key).first();
  return { object: (await env.FILES.head(key)) !== null, row: row !== null };
}

async function seedMany(userId: string, count: number, expiresAt: Date): Promise<string[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => seedFile(userId, { expiresAt, name: `bulk-${String(i).padStart(5, "0")}` })));
}

/** Rows only (no objects): cheap enough to seed thousands of them. */
async function seedRows(userId: string, count: number, expiresAt: Date): Promise<void> {
  const statement = env.DB.prepare(
    "INSERT INTO files (key, user_id, kind, task_id, size, md5, content_type, original_name, created_at, expires_at) VALUES (?, ?, 'upload', NULL, 1, NULL, 'text/plain', NULL, ?, ?)",
  );
  const now = new Date().toISOString();
  await env.DB.batch(Array.from({ length: count }, (_, i) => statement.bind(`uploads/${userId}/row-${i}.txt`, userId, now, expiresAt.toISOString())));
}

async function expiredRowCount(): Promise<number> {
  const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM files WHERE expires_at <= ?").bind(new Date().toISOString()).first<{ n: number }>();
  return row?.n ?? 0;
}

describe("sweepExpiredFiles", () => {
  it("deletes expired objects and their rows and keeps live files", async () => {
    const { userId } = await createUser();
    const expired = await seedFile(userId, { expiresAt: new Date(Date.now() - 1000) });
    const live = await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR) });
    expect(await sweepExpiredFiles(env)).toBe(1);
    expect(await exists(expired)).toEqual({ object: false, row: false });
    expect(await exists(live)).toEqual({ object: true, row: true });
  });

  it("runs from the cron trigger through the Worker's scheduled handler", async () => {
    const { userId } = await createUser();
    const expired = await seedFile(userId, { expiresAt: new Date(Date.now() - HOUR) });
    const live = await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR) });
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ cron: "*/10 * * * *", scheduledTime: new Date() }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await exists(expired)).toEqual({ object: false, row: false });
    expect(await exists(live)).toEqual({ object: true, row: true });
  });

  it("removes the row of an expired file whose object is already gone", async () => {
    const { userId } = await createUser();
    const key = await seedFile(userId, { expiresAt: new Date(Date.now() - 1000) });
    await env.FILES.delete(key);
    await sweepExpiredFiles(env);
    expect(await exists(key)).toEqual({ object: false, row: false });
  });

  it("deletes 250 expired files across several batches in one run", async () => {
    const { userId } = await createUser();
    const expired = await seedMany(userId, 250, new Date(Date.now() - 1000));
    const live = await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR) });
    expect(await sweepExpiredFiles(env)).toBe(250);
    expect((await env.FILES.list({ prefix: `uploads/${userId}/bulk-` })).objects).toEqual([]);
    expect(await expiredRowCount()).toBe(0);
    expect(await exists(live)).toEqual({ object: true, row: true });
    expect(await exists(expired[0]!)).toEqual({ object: false, row: false });
  });

  it("is safe when two sweeps run at once: every expired file goes, live ones stay, neither fails", async () => {
    const { userId } = await createUser();
    await seedMany(userId, 250, new Date(Date.now() - 1000));
    const live = await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR) });
    const [first, second] = await Promise.all([sweepExpiredFiles(env), sweepExpiredFiles(env)]);
    expect(first + second).toBeGreaterThanOrEqual(250);
    expect((await env.FILES.list({ prefix: `uploads/${userId}/bulk-` })).objects).toEqual([]);
    expect(await expiredRowCount()).toBe(0);
    expect(await exists(live)).toEqual({ object: true, row: true });
  });

  it("bounds the work of one run and leaves the rest for the next", async () => {
    const { userId } = await createUser();
    await seedRows(userId, 5000, new Date(Date.now() - 1000));
    const firstRun = await sweepExpiredFiles(env);
    expect(firstRun).toBeGreaterThan(0);
    expect(firstRun).toBeLessThan(5000);
    expect(await expiredRowCount()).toBe(5000 - firstRun);
    let runs = 1;
    while ((await expiredRowCount()) > 0 && runs < 10) {
      await sweepExpiredFiles(env);
      runs++;
    }
    expect(await expiredRowCount()).toBe(0);
  }, 30_000);

  it("treats a file as expired exactly at its expires_at, judged by the time it is given", async () => {
    const { userId } = await createUser();
    const at = new Date(Date.now() + 10 * HOUR);
    const key = await seedFile(userId, { expiresAt: at });
    await sweepExpiredFiles(env, new Date(at.getTime() - 1));
    expect(await exists(key)).toEqual({ object: true, row: true });
    await sweepExpiredFiles(env, at);
    expect(await exists(key)).toEqual({ object: false, row: false });
  });
});
