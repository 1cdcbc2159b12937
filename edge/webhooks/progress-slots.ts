import type { ProgressHandover } from "../../shared/schemas/webhooks";
import { log } from "../lib/log";
import { deliverProgressToEndpoint } from "./endpoint-delivery";

const slotKey = (taskId: string) => `progress:${taskId}`;
const endedKey = (taskId: string) => `ended:${taskId}`;
/** A task's end is remembered this long, to drop its progress events that arrive late. */
const ENDED_KEPT_MS = 60 * 60_000;

/**
 * A registered endpoint's progress events, one slot per task inside the endpoint's receiver
 * object: latest wins (a newer event replaces one not yet sent), each is sent once, and none
 * after the task's end event reached this object. The object handles one endpoint, so its
 * storage and memory order everything for it: an end waits for a progress attempt under way.
 */
export class ProgressSlots {
  /** The attempts under way, per task: at most one at a time for a task. */
  private readonly sending = new Map<string, Promise<void>>();

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
  ) {}

  /** Takes a task's progress event, unless the task has ended here or a newer one is waiting. */
  async offer(handover: ProgressHandover): Promise<void> {
    const storage = this.ctx.storage;
    const [ended, waiting] = await Promise.all([storage.get(endedKey(handover.task_id)), storage.get<ProgressHandover>(slotKey(handover.task_id))]);
    if (ended !== undefined || (waiting && waiting.seq >= handover.seq)) return;
    await storage.put(slotKey(handover.task_id), handover);
    if (this.sending.has(handover.task_id)) return;
    const run = this.drain(handover.task_id).finally(() => this.sending.delete(handover.task_id));
    this.sending.set(handover.task_id, run);
    this.ctx.waitUntil(run);
  }

  /**
   * The task's end event arrived: its waiting progress event is dropped and later ones will be.
   * Resolves once an attempt under way is over, so the end is sent after it.
   */
  async end(taskId: string, now = Date.now()): Promise<void> {
    await this.ctx.storage.put(endedKey(taskId), now);
    await this.ctx.storage.delete(slotKey(taskId));
    await this.forgetEndsBefore(now - ENDED_KEPT_MS);
    await this.sending.get(taskId);
  }

  private async drain(taskId: string): Promise<void> {
    for (;;) {
      const handover = await this.ctx.storage.get<ProgressHandover>(slotKey(taskId));
      if (!handover) return;
      await this.ctx.storage.delete(slotKey(taskId));
      await deliverProgressToEndpoint(this.env, handover).catch((error: unknown) => log.error("progress delivery error", { webhook_id: handover.event.id, error }));
    }
  }

  private async forgetEndsBefore(before: number): Promise<void> {
    const ends = await this.ctx.storage.list<number>({ prefix: "ended:" });
    const old = [...ends].filter(([, at]) => at < before).map(([key]) => key);
    if (old.length > 0) await this.ctx.storage.delete(old.slice(0, 128));
  }
}
