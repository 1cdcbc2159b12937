/** What the runs of a task's container need of it. */
export interface RunHost {
  running(): boolean;
  /** Removes the container with everything in it. */
  destroy(): Promise<void>;
  /** Tells the transcoder inside to stop one run of the task (`DELETE /jobs/{task}?run=N`), starting nothing. */
  cancelRun(run: number): Promise<void>;
}

const NEWEST_RUN_KEY = "ffedge:newest-run";
const GIVEN_UP_KEY = "ffedge:given-up-run";
const ENDED_KEY = "ffedge:ended";

/**
 * Orders the stops and starts of one task's container, which every run of the task shares
 * (it is named by the task id). A run given up is stopped in the background while the next
 * run is already queued, and the two calls reach the container's object in any order and
 * interleave wherever one awaits the container (input gates hold only across storage calls);
 * the platform orders neither (`destroy()` kills whatever container runs at that moment).
 * https://blog.cloudflare.com/durable-objects-easy-fast-correct-choose-three/
 * So a stop names its run, and
 * - the container is removed only while that run is the newest ever handed to it: a stop
 *   that arrives after a newer run went in only stops its own run inside the transcoder,
 *   which replaces older runs by itself;
 * - a start waits for a removal already under way, so it never lands in a container about
 *   to be killed;
 * - once the task has ended no run starts here again.
 * The newest run is kept in the object's storage, read and written synchronously, so no other
 * call can slip in between a check and the decision taken on it.
 * https://developers.cloudflare.com/durable-objects/api/sqlite-storage-api/#synchronous-kv-api
 */
export class ContainerRuns {
  private removal: Promise<void> = Promise.resolve();

  constructor(private readonly storage: Pick<SyncKvStorage, "get" | "put">, private readonly host: RunHost) {}

  /**
   * Before run `run`'s job goes into the container: records it as the newest run and waits
   * for a removal under way. False when the task has ended, that run was given up, or a newer
   * run went in: a late start of an old run would otherwise bring up a container nobody waits for.
   */
  async admit(run: number): Promise<boolean> {
    const givenUp = this.storage.get<number>(GIVEN_UP_KEY) ?? -1;
    if (this.storage.get(ENDED_KEY) === true || run <= givenUp || run < this.newest()) return false;
    this.storage.put(NEWEST_RUN_KEY, run);
    await this.removal;
    return true;
  }

  /** Run `run` was given up: its container goes unless a newer run was handed to it since. */
  async stop(run: number): Promise<void> {
    if (run > (this.storage.get<number>(GIVEN_UP_KEY) ?? -1)) this.storage.put(GIVEN_UP_KEY, run);
    if (run < this.newest()) {
      if (this.host.running()) await this.host.cancelRun(run);
      return;
    }
    await this.remove();
  }

  /** The task has ended: the container goes and no run starts in it again. */
  async end(): Promise<void> {
    this.storage.put(ENDED_KEY, true);
    await this.remove();
  }

  private newest(): number {
    return this.storage.get<number>(NEWEST_RUN_KEY) ?? -1;
  }

  /** Removals run one after another; a failed one is the caller's to see, and does not block later starts. */
  private remove(): Promise<void> {
    const removed = this.removal.then(async () => {
      if (this.host.running()) await this.host.destroy();
    });
    // The caller sees the failure in `removed`; later removals only wait for it to end.
    this.removal = removed.catch(() => undefined);
    return removed;
  }
}
