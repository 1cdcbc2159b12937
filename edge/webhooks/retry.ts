/** Retries go on until this long after the first attempt (Standard Webhooks' and peers' norm). */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A bound on one event's attempts, far past what the 24 h window needs (11 or 12), should the schedule be shortened. */
export const MAX_DELIVERY_ATTEMPTS = 100;
/** The longest pause between two attempts, so a receiver that comes back is tried again the same day. */
const MAX_DELAY_SECONDS = 12 * 60 * 60;

/**
 * Delay before the retry that follows failed attempt `attempt` (1-based): the schedule's entry,
 * its last entry once past the end, with ±20 % jitter so that many receivers failing together
 * are not retried in lockstep.
 */
export function retryDelaySeconds(attempt: number, schedule: readonly number[], random: () => number = Math.random): number {
  const base = schedule[Math.min(Math.max(attempt, 1), schedule.length) - 1]!;
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  return Math.min(MAX_DELAY_SECONDS, Math.max(1, jittered));
}

/** True once 24 h have passed since the first attempt, or the event has had MAX_DELIVERY_ATTEMPTS attempts. */
export function retriesExhausted(firstAttemptAt: string, attempt: number, now = Date.now()): boolean {
  return now - Date.parse(firstAttemptAt) >= RETRY_WINDOW_MS || attempt >= MAX_DELIVERY_ATTEMPTS;
}
