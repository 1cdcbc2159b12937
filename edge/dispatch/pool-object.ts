import { DurableObject } from "cloudflare:workers";
import { queueJobs } from "./jobs-queue";
import { type Waiting, oldestFirst } from "./waiting";

/** While tasks wait, the line is also woken this often, in case a slot freed without a report. */
const PROBE_MS = 5_000;

/**
 * The line for transcoder capacity. A transcoder that is busy is not a failure: the task
 * waits here, oldest first, and its job is queued again as soon as any task ends (which frees
 * a slot somewhere) — so slots do not sit idle through a backoff, and waiting never uses up
 * the job's delivery attempts. One instance serves the whole deployment.
 *
 * It is kept apart from each user's line (AccountObject) on purpose: that one guards a
 * per-user cap and lives one per user, so it scales with users; this one guards the shared
 * transcoders' capacity, which only the URL backend has (a Container per task is never busy).
 * A task passes the user's line first, then, only if every transcoder is busy, waits here.
 */
export class DispatchPoolObject extends DurableObject<Env> {
  async wait(job: Waiting): Promise<void> {
    const line = await this.load();
    if (!line.some((entry) => entry.task_id === job.task_id)) {
      line.push(job);
      line.sort(oldestFirst);
    }
    await this.save(line);
  }

  /** A task ended: the slot it held goes to the oldest waiting task. */
  async released(): Promise<void> {
    await this.wake(1);
  }

  override async alarm(): Promise<void> {
    await this.wake(1);
  }

  private async wake(count: number): Promise<void> {
    const line = await this.load();
    const next = line.splice(0, count);
    await queueJobs(this.env, next);
    await this.save(line);
  }

  private async load(): Promise<Waiting[]> {
    return (await this.ctx.storage.get<Waiting[]>("line")) ?? [];
  }

  private async save(line: Waiting[]): Promise<void> {
    await this.ctx.storage.put("line", line);
    if (line.length > 0) await this.ctx.storage.setAlarm(Date.now() + PROBE_MS);
    else await this.ctx.storage.deleteAlarm();
  }
}
