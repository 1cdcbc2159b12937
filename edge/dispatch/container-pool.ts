import { DurableObject } from "cloudflare:workers";
import { getContainer } from "@cloudflare/containers";
import { config } from "../lib/config";
import { log } from "../lib/log";
import { taskIsOver } from "./dispatcher";
import { type Claim, type PoolLimits, type PoolState, claim, dropWarm, emptyPool, housekeep, release, startEnded, started, toStart } from "./pool-state";
import type { TranscoderContainer } from "./transcoder-container";

const STATE_KEY = "pool";
/** The pool wakes this often while it holds anything: warm containers are kept alive, lost releases found, storage purged. */
const TICK_MS = 60_000;
/** A task holding a container this long is checked against its state, in case its release was lost. */
const RECHECK_AFTER_MS = 5 * 60_000;

/**
 * The containers of the whole deployment: which task holds which container, a few warm ones
 * (started, never used) so that a short task does not wait for a cold start, and the count of
 * all of them against `max_instances`, so a task beyond it waits in its line instead of failing
 * (the platform answers "no instance" only after seconds of trying). Each container takes
 * exactly one task and is removed when that task ends; the pool starts another in the
 * background. One object for the deployment: its few calls per task are far below a Durable
 * Object's request rate (docs/scale.md says when to shard it).
 * https://developers.cloudflare.com/containers/platform-details/scaling-and-routing/
 */
export class ContainerPoolObject extends DurableObject<Env> {
  /** A container for the task's run, or why there is none now. */
  async claim(taskId: string): Promise<Claim> {
    const { result, next } = claim(this.load(), taskId, this.limits(), Date.now());
    this.save(next);
    this.refill();
    await this.wake();
    return result;
  }

  /** The task ended: its container is removed at once, and its instance goes to the pool or the next task. */
  async release(taskId: string): Promise<void> {
    const { name, next } = release(this.load(), taskId, Date.now());
    this.save(next);
    if (name) await this.container(name).endTask(taskId);
    this.refill();
    await this.wake();
  }

  /** What the pool holds, for tests and the operator. */
  async snapshot(): Promise<PoolState & PoolLimits> {
    return { ...this.load(), ...this.limits() };
  }

  override async alarm(): Promise<void> {
    await this.tick();
  }

  /**
   * Keeps the pool: purges the storage of containers whose task ended, drops warm containers
   * that stopped, releases tasks whose release was lost, and starts warm containers up to the
   * target. Runs on the pool's own alarm while it holds anything, and from the cron sweep, which
   * fills the pool after a deploy before any task came.
   */
  async tick(): Promise<void> {
    const { due, next } = housekeep(this.load(), Date.now());
    this.save(next);
    await Promise.all(due.map((name) => this.container(name).purge().catch((error) => log.error("could not delete a container's storage", { container: name, error }))));
    await Promise.all(this.load().warm.map(async (name) => {
      // One that does not answer is no longer warm: it leaves the pool.
      if (!(await this.container(name).keepWarm().catch(() => false))) this.save(dropWarm(this.load(), name));
    }));
    await this.recheckAssignments();
    this.refill();
    await this.wake();
  }

  /** Starts warm containers up to the target, in the background; each joins the pool once its port answers. */
  private refill(): void {
    const names = toStart(this.load(), this.limits(), () => `warm-${crypto.randomUUID()}`);
    for (const name of names) {
      this.save(started(this.load(), name, Date.now()));
      this.ctx.waitUntil(this.container(name).warmUp().then(
        () => this.save(startEnded(this.load(), name, true)),
        (error) => {
          log.error("a warm container did not start", { container: name, error });
          this.save(startEnded(this.load(), name, false));
        },
      ));
    }
  }

  /** A release lost on its way (the task's end effects failed) would hold an instance forever. */
  private async recheckAssignments(): Promise<void> {
    const now = Date.now();
    const old = Object.entries(this.load().assigned).filter(([, held]) => now - held.at > RECHECK_AFTER_MS);
    await Promise.all(old.map(async ([taskId]) => {
      // An object that does not answer is asked again at the next tick.
      if (await taskIsOver(this.env, taskId).catch(() => false)) await this.release(taskId);
    }));
  }

  private async wake(): Promise<void> {
    const state = this.load();
    const idle = Object.keys(state.assigned).length + state.warm.length + Object.keys(state.starting).length + Object.keys(state.purge).length === 0;
    if (idle) await this.ctx.storage.deleteAlarm();
    else if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + TICK_MS);
  }

  private container(name: string) {
    return getContainer(this.env.TRANSCODER as unknown as DurableObjectNamespace<TranscoderContainer>, name);
  }

  private limits(): PoolLimits {
    const settings = config(this.env);
    return { maxInstances: settings.containerMaxInstances, warmTarget: settings.warmContainers };
  }

  // The synchronous KV API: no other call can run between a read and the write that follows it.
  // https://developers.cloudflare.com/durable-objects/api/sqlite-storage-api/#synchronous-kv-api
  private load(): PoolState {
    return this.ctx.storage.kv.get<PoolState>(STATE_KEY) ?? emptyPool();
  }

  private save(state: PoolState): void {
    this.ctx.storage.kv.put(STATE_KEY, state);
  }
}
