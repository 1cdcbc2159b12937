import { DurableObject } from "cloudflare:workers";
import type { JobMessage } from "../../shared/schemas/queue";
import { config } from "../lib/config";
import { queueJobs, taskIsOver } from "./dispatcher";

/** A task in the line: what its job message carries, so the line can queue it again. */
type Waiting = JobMessage;

/** The line serves the oldest submission first (ties by id, so the order is total). */
function oldestFirst(a: Waiting, b: Waiting): number {
  return a.created_at.localeCompare(b.created_at) || a.task_id.localeCompare(b.task_id);
}

interface Line {
  /** Tasks holding one of the user's running slots. */
  running: string[];
  /** Tasks waiting for a slot, oldest submission first. */
  waiting: Waiting[];
  /** Tasks among `waiting` that had a slot but found every transcoder busy. */
  busy: string[];
  /** When the running slots are next checked against the tasks' states. */
  recheck_at: number;
}

/** Running slots are re-checked this often in case a release was lost. */
const RECHECK_MS = 60_000;
/** While a task waits for transcoder capacity, the line is woken this often, in case capacity freed elsewhere. */
const BUSY_PROBE_MS = 5_000;

/**
 * The one waiting line of dispatch, one per user. A task starts only with one of the user's
 * running slots (MAX_RUNNING_TASKS_PER_USER); excess tasks stay `pending` and get a slot in
 * submission order as slots free up, and are never dropped. A task that had a slot but found
 * every transcoder busy (the URL backend's servers, or every container instance the deployment
 * may run) gives it back and waits in the same line at its submission place. Each task's
 * end frees its slot and wakes the line at once; a line with busy tasks also wakes itself every
 * few seconds, since capacity may free up through another user's task. The jobs consumer asks
 * for slots; the line queues a waiting task's job again when its turn comes.
 */
export class DispatchLineObject extends DurableObject<Env> {
  /**
   * The tasks among `jobs` that may start now: those that hold, or are first in line for, a
   * free slot. The others join the line, oldest submission first. A task asking again (a
   * redelivered job) keeps its slot.
   */
  async acquire(jobs: Waiting[]): Promise<string[]> {
    const line = await this.load();
    for (const job of jobs) {
      if (!line.running.includes(job.task_id) && !line.waiting.some((entry) => entry.task_id === job.task_id)) line.waiting.push(job);
    }
    line.waiting.sort(oldestFirst);
    const asking = new Set(jobs.map((job) => job.task_id));
    const granted = line.running.filter((id) => asking.has(id));
    const free = Math.max(0, this.cap() - line.running.length);
    for (const entry of line.waiting.slice(0, free)) {
      if (!asking.has(entry.task_id)) continue;
      granted.push(entry.task_id);
      line.running.push(entry.task_id);
    }
    line.waiting = line.waiting.filter((entry) => !line.running.includes(entry.task_id));
    line.busy = line.busy.filter((id) => !line.running.includes(id));
    await this.save(line);
    return granted;
  }

  /** Every transcoder was busy for this task: its slot goes back and it waits, first in line as the oldest. */
  async waitForCapacity(job: Waiting): Promise<void> {
    const line = await this.load();
    line.running = line.running.filter((id) => id !== job.task_id);
    if (!line.waiting.some((entry) => entry.task_id === job.task_id)) line.waiting.push(job);
    line.waiting.sort(oldestFirst);
    if (!line.busy.includes(job.task_id)) line.busy.push(job.task_id);
    await this.save(line);
  }

  /** A task ended (or will never run): free its slot and start whoever is next. */
  async release(taskId: string): Promise<void> {
    const line = await this.load();
    line.running = line.running.filter((id) => id !== taskId);
    line.waiting = line.waiting.filter((entry) => entry.task_id !== taskId);
    line.busy = line.busy.filter((id) => id !== taskId);
    await this.save(line);
    await this.wakeNext(line);
  }

  async usage(): Promise<{ running: number; waiting: number; cap: number }> {
    const line = await this.load();
    return { running: line.running.length, waiting: line.waiting.length, cap: this.cap() };
  }

  /** Wakes the line; now and then also drops the slots of tasks that ended without releasing them. */
  override async alarm(): Promise<void> {
    const line = await this.load();
    if (Date.now() >= line.recheck_at) {
      const over = await Promise.all(line.running.map((id) => taskIsOver(this.env, id)));
      line.running = line.running.filter((_, index) => !over[index]);
      line.recheck_at = Date.now() + RECHECK_MS;
    }
    await this.save(line);
    await this.wakeNext(line);
  }

  private async wakeNext(line: Line): Promise<void> {
    const free = this.cap() - line.running.length;
    await queueJobs(this.env, line.waiting.slice(0, Math.max(0, free)));
  }

  private cap(): number {
    return config(this.env).maxRunningTasksPerUser;
  }

  private async load(): Promise<Line> {
    const stored = await this.ctx.storage.get<Partial<Line>>("line");
    return { running: [], waiting: [], busy: [], recheck_at: Date.now() + RECHECK_MS, ...stored };
  }

  private async save(line: Line): Promise<void> {
    await this.ctx.storage.put("line", line);
    if (line.waiting.length === 0 && line.running.length === 0) return this.ctx.storage.deleteAlarm();
    await this.ctx.storage.setAlarm(line.busy.length > 0 ? Math.min(line.recheck_at, Date.now() + BUSY_PROBE_MS) : line.recheck_at);
  }
}
