/**
 * Processing time and task counts of a user, shaped for the console and GET /v1/me. The numbers
 * come from the tasks' owner (edge/tasks/repository.ts); the routes fetch them and hand them here.
 */

const DAY_MS = 86_400_000;

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

const round = (seconds: number) => Math.round(seconds * 100) / 100;

/** The first instant of a usage history of `days` UTC days ending today. */
export function usageWindowStart(days: number, now = new Date()): string {
  return new Date(Date.parse(startOfUtcDay(now)) - (days - 1) * DAY_MS).toISOString();
}

export interface DailyUsage {
  date: string;
  tasks: number;
  seconds: number;
}

/** Per UTC day (`YYYY-MM-DD`): tasks created, and seconds ffmpeg ran for the tasks that finished that day; days without any are absent. */
export interface DailyTaskTotals {
  created: { day: string; value: number }[];
  processedSeconds: { day: string; value: number }[];
}

/** One entry per UTC day, oldest first, from `usageWindowStart(days, now)` to today; days without tasks are zeros. */
export function dailyUsage(totals: DailyTaskTotals, days: number, now = new Date()): DailyUsage[] {
  const first = usageWindowStart(days, now);
  const byDay = (rows: { day: string; value: number }[]) => new Map(rows.map((row) => [row.day, Number(row.value)]));
  const tasks = byDay(totals.created);
  const seconds = byDay(totals.processedSeconds);
  return Array.from({ length: days }, (_, index) => {
    const date = new Date(Date.parse(first) + index * DAY_MS).toISOString().slice(0, 10);
    return { date, tasks: tasks.get(date) ?? 0, seconds: round(seconds.get(date) ?? 0) };
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
export function dailyQuota(used: { processed: number; reserved: number }, dailyTaskSeconds: number, now = new Date()): DailyQuota {
  return {
    limit_seconds: dailyTaskSeconds,
    processed_seconds: round(used.processed),
    reserved_seconds: round(used.reserved),
    remaining_seconds: remainingSeconds(dailyTaskSeconds, used.processed + used.reserved),
    resets_at: new Date(Date.parse(startOfUtcDay(now)) + DAY_MS).toISOString(),
  };
}
