import { dailyTaskTotals, processedSecondsStatement, reservedSecondsStatement } from "../tasks/repository";

/** Processing time and task counts of a user, from the tasks table (its queries are in edge/tasks/repository.ts). */

export function startOfUtcDay(now: Date): string {
  return `${now.toISOString().slice(0, 10)}T00:00:00.000Z`;
}

/**
 * What is left of DAILY_TASK_SECONDS today, in seconds with two decimals: `used` is what ran
 * for tasks that finished today plus the time limits unfinished tasks hold (their reservation).
 */
export function remainingSeconds(dailyTaskSeconds: number, used: number): number {
  return Math.max(0, Math.round((dailyTaskSeconds - used) * 100) / 100);
}

export interface DailyUsage {
  date: string;
  tasks: number;
  seconds: number;
}

/** One entry per UTC day, oldest first, ending today; days without tasks are zeros. */
export async function dailyUsage(db: D1Database, userId: string, days: number, now = new Date()): Promise<DailyUsage[]> {
  const first = new Date(Date.parse(startOfUtcDay(now)) - (days - 1) * 86_400_000).toISOString();
  const totals = await dailyTaskTotals(db, userId, first);
  const byDay = (rows: { day: string; value: number }[]) => new Map(rows.map((row) => [row.day, Number(row.value)]));
  const tasks = byDay(totals.created);
  const seconds = byDay(totals.processedSeconds);
  return Array.from({ length: days }, (_, index) => {
    const date = new Date(Date.parse(first) + index * 86_400_000).toISOString().slice(0, 10);
    return { date, tasks: tasks.get(date) ?? 0, seconds: Math.round((seconds.get(date) ?? 0) * 100) / 100 };
  });
}

export interface DailyQuota {
  limit_seconds: number;
  processed_seconds: number;
  reserved_seconds: number;
  remaining_seconds: number;
  resets_at: string;
}

/**
 * Today's DAILY_TASK_SECONDS as the task insert counts it (`insertTaskWithinQuota`): seconds
 * processed since 00:00 UTC plus the time limits the unfinished tasks hold. Submissions answer
 * 429 QUOTA_EXCEEDED once less than a second remains.
 */
export async function dailyQuota(db: D1Database, userId: string, settings: { dailyTaskSeconds: number; taskTimeoutSeconds: number }, now = new Date()): Promise<DailyQuota> {
  const since = startOfUtcDay(now);
  const [processed, reserved] = await db.batch<{ value: number }>([
    processedSecondsStatement(db, userId, since),
    reservedSecondsStatement(db, userId, settings.taskTimeoutSeconds),
  ]);
  const value = (result: D1Result<{ value: number }> | undefined) => Number(result?.results[0]?.value ?? 0);
  const round = (seconds: number) => Math.round(seconds * 100) / 100;
  return {
    limit_seconds: settings.dailyTaskSeconds,
    processed_seconds: round(value(processed)),
    reserved_seconds: round(value(reserved)),
    remaining_seconds: remainingSeconds(settings.dailyTaskSeconds, value(processed) + value(reserved)),
    resets_at: new Date(Date.parse(since) + 86_400_000).toISOString(),
  };
}
