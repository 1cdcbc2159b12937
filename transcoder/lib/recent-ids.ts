/**
 * The runs this transcoder has finished lately, by task id: for each task the highest run that
 * ended here, so a redelivered job for that run (or an older one) is refused instead of running
 * ffmpeg twice, while a newer run of the same task is taken. Bounded in size and age; the oldest
 * entries are forgotten first.
 */
export class RecentIds {
  private readonly seen = new Map<string, { run: number; at: number }>();

  constructor(
    private readonly maxSize: number,
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  add(id: string, run = 0): void {
    const highest = Math.max(run, this.seen.get(id)?.run ?? run);
    this.seen.delete(id);
    this.seen.set(id, { run: highest, at: this.now() });
    this.prune();
  }

  /** Whether run `run` of task `id`, or a later one, ended here lately. */
  has(id: string, run = 0): boolean {
    this.prune();
    const entry = this.seen.get(id);
    return entry !== undefined && entry.run >= run;
  }

  get size(): number {
    return this.seen.size;
  }

  private prune(): void {
    const oldestAllowed = this.now() - this.maxAgeMs;
    // Insertion order is age order, so pruning stops at the first id young enough to keep.
    for (const [id, { at }] of this.seen) {
      if (this.seen.size <= this.maxSize && at >= oldestAllowed) break;
      this.seen.delete(id);
    }
  }
}
