/**
 * At most `size` holders at once; others wait in arrival order. Waiting ends early when the
 * waiter's signal aborts, so a canceled job never takes a slot.
 */
export class Semaphore {
  private held = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly size: number) {}

  get inUse(): number {
    return this.held;
  }

  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.held >= this.size) {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          this.waiters.splice(this.waiters.indexOf(wake), 1);
          reject(signal!.reason);
        };
        this.waiters.push(wake);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    } else {
      this.held++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      // The slot passes straight to the next waiter; `held` only drops when nobody waits.
      if (next) next();
      else this.held--;
    };
  }
}
