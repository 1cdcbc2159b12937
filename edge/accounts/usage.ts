/** Processing time and task counts of a user, from the tasks table. */

export function startOfUtcDay(now: Date): string {
  return `${now.toISOString().slice(0, 10)}T00:00:00.000Z`;
}

/** Seconds ffmpeg ran (started → finished) for the user's tasks that finished since `since`. */
export function processedSecondsStatement(db: D1Database, userId: string, since: string): D1PreparedStatement {
  return db
    .prepare("SELECT COALESCE(SUM((julianday(finished_at) - julianday(started_at)) * 86400.0), 0) AS value FROM tasks WHERE user_id = ? AND finished_at >= ? AND started_at IS NOT NULL")
    .bind(userId, since);
}

/** What is left of DAILY_TASK_SECONDS today, in seconds with two decimals. */
export function remainingSeconds(dailyTaskSeconds: number, processedToday: number): number {
  return Math.max(0, Math.round((dailyTaskSeconds - processedToday) * 100) / 100);
}

export interface DailyUsage {
  date: string;
  tasks: number;
  seconds: number;
}

/** One entry per UTC day, oldest first, ending today; days without tasks are zeros. */
export async function dailyUsage(db: D1Database, userId: string, days: number, now = new Date()): Promise<DailyUsage[]> {
  const first = new Date(Date.parse(startOfUtcDay(now)) - (days - 1) * 86_400_000).toISOString();
  const [created, processed] = await db.batch<{ day: string; value: number }>([
    db.prepare("SELECT substr(created_at, 1, 10) AS day, COUNT(*) AS value FROM tasks WHERE user_id = ? AND created_at >= ? GROUP BY day").bind(userId, first),
    db
      .prepare("SELECT substr(finished_at, 1, 10) AS day, SUM((julianday(finished_at) - julianday(started_at)) * 86400.0) AS value FROM tasks WHERE user_id = ? AND finished_at >= ? AND started_at IS NOT NULL GROUP BY day")
      .bind(userId, first),
  ]);
  const byDay = (rows: { day: string; value: number }[]) => new Map(rows.map((row) => [row.day, Number(row.value)]));
  const tasks = byDay(created!.results);
  const seconds = byDay(processed!.results);
  return Array.from({ length: days }, (_, index) => {
    const date = new Date(Date.parse(first) + index * 86_400_000).toISOString().slice(0, 10);
    return { date, tasks: tasks.get(date) ?? 0, seconds: Math.round((seconds.get(date) ?? 0) * 100) / 100 };
  });
}
