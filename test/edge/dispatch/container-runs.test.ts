import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ContainerRuns, type RunHost } from "../../../edge/dispatch/container-runs";

/**
 * The platform side of one task's container as the Containers runtime behaves: `destroy()` is
 * a SIGKILL of whatever runs when it lands (a run started meanwhile included), and a removal
 * takes time. `held` holds removals until the test lets them land, to interleave calls as the
 * Worker's background stop and the queue consumer's start do.
 */
class TaskContainer implements RunHost {
  /** The runs the transcoder inside holds; empty when no container runs. */
  readonly jobs = new Set<number>();
  readonly canceled: number[] = [];
  destroyed = 0;
  failNextDestroy = false;
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => {};

  running(): boolean {
    return this.jobs.size > 0;
  }

  hold(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  letGo(): void {
    this.open();
  }

  async destroy(): Promise<void> {
    await this.gate;
    if (this.failNextDestroy) {
      this.failNextDestroy = false;
      throw new Error("the runtime refused the destroy");
    }
    this.destroyed++;
    this.jobs.clear();
  }

  async cancelRun(run: number): Promise<void> {
    this.canceled.push(run);
    this.jobs.delete(run);
  }

  /** What TranscoderContainer.startJob does: admitted, the job goes in (the transcoder replaces an older run itself). */
  async start(runs: ContainerRuns, run: number): Promise<boolean> {
    if (!(await runs.admit(run))) return false;
    this.jobs.clear();
    this.jobs.add(run);
    return true;
  }
}

/** Runs `test` with the synchronous storage of a fresh SQLite-backed object, as a TranscoderContainer has. */
function withStorage(test: (storage: SyncKvStorage) => Promise<void>): Promise<void> {
  const stub = env.DISPATCH_LINES.get(env.DISPATCH_LINES.newUniqueId());
  return runInDurableObject(stub, (_instance, state) => test(state.storage.kv));
}

function containerOver(storage: SyncKvStorage) {
  const container = new TaskContainer();
  return { container, runs: new ContainerRuns(storage, container) };
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("the runs of a task's container (ContainerRuns)", () => {
  it("starts the next run only once the removal of the run given up before it has landed, so the kill never hits the new run", () => withStorage(async (storage) => {
    const { container, runs } = containerOver(storage);
    expect(await container.start(runs, 0)).toBe(true);
    container.hold();
    const stop = runs.stop(0);
    let started = false;
    const next = container.start(runs, 1).then((ok) => (started = ok));
    await settled();
    expect(started).toBe(false);
    container.letGo();
    await Promise.all([stop, next]);
    expect(started).toBe(true);
    expect(container.destroyed).toBe(1);
    expect([...container.jobs]).toEqual([1]);
  }));

  it("never removes the container for a stop that arrives after the next run went in: only the old run is stopped, inside the transcoder", () => withStorage(async (storage) => {
    const { container, runs } = containerOver(storage);
    await container.start(runs, 0);
    await container.start(runs, 1);
    await runs.stop(0);
    expect(container.destroyed).toBe(0);
    expect(container.canceled).toEqual([0]);
    expect([...container.jobs]).toEqual([1]);
  }));

  it("does not remove the container when the stop of an older run lands while the next run's start is under way", () => withStorage(async (storage) => {
    const { container, runs } = containerOver(storage);
    await container.start(runs, 0);
    const next = container.start(runs, 1);
    await runs.stop(0);
    await next;
    expect(container.destroyed).toBe(0);
    expect([...container.jobs]).toEqual([1]);
  }));

  it("removes the container of the newest run given up (a hung transcoder), and the next run starts in a fresh one", () => withStorage(async (storage) => {
    const { container, runs } = containerOver(storage);
    await container.start(runs, 1);
    await runs.stop(1);
    expect(container.destroyed).toBe(1);
    expect(container.running()).toBe(false);
    expect(await container.start(runs, 2)).toBe(true);
    expect([...container.jobs]).toEqual([2]);
  }));

  it("remembers the newest run across a restart of the container's object", () => withStorage(async (storage) => {
    const container = new TaskContainer();
    await container.start(new ContainerRuns(storage, container), 3);
    await new ContainerRuns(storage, container).stop(2);
    expect(container.destroyed).toBe(0);
    expect([...container.jobs]).toEqual([3]);
  }));

  it("starts no run once the task has ended, even one whose dispatch was under way, and removes the container", () => withStorage(async (storage) => {
    const { container, runs } = containerOver(storage);
    await container.start(runs, 0);
    await runs.end();
    expect(container.destroyed).toBe(1);
    expect(await container.start(runs, 0)).toBe(false);
    expect(await container.start(runs, 1)).toBe(false);
    expect(container.running()).toBe(false);
  }));

  it("starts no run that was given up or is older than one that went in, even after the container was removed, but takes the same run again", () => withStorage(async (storage) => {
    const { container, runs } = containerOver(storage);
    await container.start(runs, 2);
    expect(await container.start(runs, 2)).toBe(true);
    await runs.stop(2);
    expect(await container.start(runs, 1)).toBe(false);
    expect(await container.start(runs, 2)).toBe(false);
    expect(container.running()).toBe(false);
    expect(await container.start(runs, 3)).toBe(true);
  }));

  it("lets the caller see a failed removal without blocking later starts", () => withStorage(async (storage) => {
    const { container, runs } = containerOver(storage);
    await container.start(runs, 0);
    container.failNextDestroy = true;
    await expect(runs.stop(0)).rejects.toThrow("refused the destroy");
    expect(await container.start(runs, 1)).toBe(true);
    expect([...container.jobs]).toEqual([1]);
  }));
});
