import { sleep } from "./sleep";

export interface RetryOptions {
  /** Whether a failure of try number `attempt` (from 1) may be tried again. */
  retryable: (error: unknown, attempt: number) => boolean;
  /** How long to wait after try number `attempt` fails; zero or less gives up. */
  delayMs: (attempt: number) => number;
  /** Cuts a wait short (the next try starts at once); a function is read before every wait. */
  wake?: AbortSignal | (() => AbortSignal);
}

/**
 * Runs `work` until it succeeds, a failure is not retryable, or `delayMs` says to stop; then
 * throws the last failure. The one retry loop of the transcoder: input downloads, output uploads
 * and job reports (the terminal one carries ffmpeg's log) all go through it.
 */
export async function retry<T>(work: (attempt: number) => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work(attempt);
    } catch (error) {
      const wait = options.retryable(error, attempt) ? options.delayMs(attempt) : 0;
      if (wait <= 0) throw error;
      await sleep(wait, typeof options.wake === "function" ? options.wake() : options.wake);
    }
  }
}

/** Exponential backoff from `baseMs` (doubling per try, at most `maxMs`), with ±20 % jitter when asked. */
export function backoff(attempt: number, baseMs: number, maxMs: number, jitter = true): number {
  const delay = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
  return jitter ? delay * (0.8 + Math.random() * 0.4) : delay;
}
