/**
 * The task ids this transcoder has run lately, so a redelivered queue message for a task that
 * already ran is refused instead of running ffmpeg twice. Bounded in size and age; the oldest
 * ids are forgotten first.
 */
export class RecentIds {
  private readonly seenAt = new Map<string, number>();

  constructor(
    private readonly maxSize: number,
    private readonly maxAgeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  add(id: string): void {
    this.seenAt.delete(id);
    this.seenAt.set(id, this.now());
    this.prune();
  }

  has(id: string): boolean {
    this.prune();
    return this.seenAt.has(id);
  }

  get size(): number {
    return this.seenAt.size;
  }

  private prune(): void {
    const oldestAllowed = this.now() - this.maxAgeMs;
    // Insertion order is age order, so pruning stops at the first id young enough to keep.
    for (const [id, at] of this.seenAt) {
      if (this.seenAt.size <= this.maxSize && at >= oldestAllowed) break;
      this.seenAt.delete(id);
    }
  }
}
