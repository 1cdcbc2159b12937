import { DurableObject } from "cloudflare:workers";
import { queueJobs } from "../dispatch/jobs-queue";
import { type Waiting, oldestFirst } from "../dispatch/waiting";
import { config } from "../lib/config";
import { isFinal } from "../tasks/state";
import { liveState } from "../lib/stubs";

interface Slots {
  /** Tasks holding a running slot. */
  running: string[];
  /** Tasks waiting for a slot, oldest submission first. */
  waiting: Waiting[];
}

/** While anything waits, slots are re-checked this often in case a release was lost. */
const RECHECK_MS = 60_000;

/**
 * One per user: the cap on tasks running at once. Excess tasks stay `pending` and get a slot
 * in submission order as slots free up; they are never dropped. The queue consumer asks for
 * slots for all of a user's jobs in its batch at once, so jobs delivered together are served
 * in submission order too; a task that has to wait is re-queued from here when its turn comes.
 */
export class AccountObject extends DurableObject<Env> {
  /**
   * The tasks among `jobs` that may start now: those that hold, or are first in line for, a
   * free slot. The others join the line, oldest submission first. A task asking again (a
   * redelivered job) keeps its slot.
   */
  async acquire(jobs: Waiting[]): Promise<string[]> {
    const slots = await this.load();
    for (const job of jobs) {
      if (!slots.running.includes(job.task_id) && !slots.waiting.some((entry) => entry.task_id === job.task_id)) slots.waiting.push(job);
    }
    slots.waiting.sort(oldestFirst);
    const asking = new Set(jobs.map((job) => job.task_id));
    const granted = slots.running.filter((id) => asking.has(id));
    const free = Math.max(0, this.cap() - slots.running.length);
    for (const entry of slots.waiting.slice(0, free)) {
      if (!asking.has(entry.task_id)) continue;
      granted.push(entry.task_id);
      slots.running.push(entry.task_id);
    }
    slots.waiting = slots.waiting.filter((entry) => !slots.running.includes(entry.task_id));
    await this.save(slots);
    return granted;
  }

  /** A task ended (or will never run): free its slot and start whoever is next. */
  async release(taskId: string): Promise<void> {
    const slots = await this.load();
    slots.running = slots.running.filter((id) => id !== taskId);
    slots.waiting = slots.waiting.filter((entry) => entry.task_id !== taskId);
    await this.save(slots);
    await this.wakeNext(slots);
  }

  async usage(): Promise<{ running: number; waiting: number; cap: number }> {
    const slots = await this.load();
    return { running: slots.running.length, waiting: slots.waiting.length, cap: this.cap() };
  }

  /** Safety net: drop slots of tasks that ended without releasing, and wake the line. */
  override async alarm(): Promise<void> {
    const slots = await this.load();
    const states = await Promise.all(slots.running.map(async (id) => [id, await liveState(this.env, id)] as const));
    slots.running = states.filter(([, state]) => state && !isFinal(state.status)).map(([id]) => id);
    await this.save(slots);
    await this.wakeNext(slots);
  }

  private async wakeNext(slots: Slots): Promise<void> {
    const free = this.cap() - slots.running.length;
    const next = slots.waiting.slice(0, Math.max(0, free));
    await queueJobs(this.env, next);
  }

  private cap(): number {
    return config(this.env).maxRunningTasksPerUser;
  }

  private async load(): Promise<Slots> {
    return (await this.ctx.storage.get<Slots>("slots")) ?? { running: [], waiting: [] };
  }

  private async save(slots: Slots): Promise<void> {
    await this.ctx.storage.put("slots", slots);
    if (slots.waiting.length > 0 || slots.running.length > 0) await this.ctx.storage.setAlarm(Date.now() + RECHECK_MS);
    else await this.ctx.storage.deleteAlarm();
  }
}
