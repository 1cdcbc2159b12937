/**
 * The bookkeeping of the container pool (edge/dispatch/container-pool.ts) as pure functions, so
 * every decision is tested without a platform. Every container counts against the account's
 * `max_instances`: those given to tasks, the warm ones waiting for a task, and those starting.
 */
export interface PoolState {
  /** Task id → the container it was given (a task keeps its container for all its runs). */
  assigned: Record<string, { name: string; at: number }>;
  /** Started, never used, in the order they became ready. */
  warm: string[];
  /** Being started for the pool, by name → when the start began. */
  starting: Record<string, number>;
  /** Tasks released: a late claim for one of them starts nothing. Pruned after ENDED_TTL_MS. */
  ended: Record<string, number>;
  /** Containers whose task ended: their object's storage is deleted once this time has passed. */
  purge: Record<string, number>;
}

export interface PoolLimits {
  /** The most containers at once (wrangler.toml's `max_instances`). */
  maxInstances: number;
  /** How many pre-started, never-used containers the pool keeps. */
  warmTarget: number;
}

export type Claim =
  | { kind: "container"; name: string; warm: boolean }
  /** Every instance is in use: the task waits in its line and is tried again. */
  | { kind: "busy" }
  /** The task was already released (it ended while its dispatch was on its way). */
  | { kind: "ended" };

/** A released task's tombstone is kept this long; a claim later than that cannot be in flight. */
export const ENDED_TTL_MS = 60 * 60 * 1000;
/**
 * How long a container's object keeps its storage after its task ended: long enough for the
 * platform's stop callbacks (which write the object's state) to have run, so the deletion is last.
 */
export const PURGE_DELAY_MS = 30_000;
/** A warm start that never reported back is forgotten after this long (the start waits at most 60 s for the port). */
export const START_STALE_MS = 3 * 60 * 1000;

export function emptyPool(): PoolState {
  return { assigned: {}, warm: [], starting: {}, ended: {}, purge: {} };
}

export function inUse(state: PoolState): number {
  return Object.keys(state.assigned).length + state.warm.length + Object.keys(state.starting).length;
}

/**
 * Gives `taskId` a container: the one it already has (a redelivered dispatch, or its next run),
 * else the oldest warm one, else one still starting for the pool (its start is joined), else a
 * new one started cold under the task's own name while an instance is free; else busy.
 */
export function claim(state: PoolState, taskId: string, limits: PoolLimits, now: number): { result: Claim; next: PoolState } {
  if (state.ended[taskId] !== undefined) return { result: { kind: "ended" }, next: state };
  const held = state.assigned[taskId];
  if (held) return { result: { kind: "container", name: held.name, warm: false }, next: state };
  const next = copy(state);
  let name = next.warm.shift();
  let warm = name !== undefined;
  if (name === undefined) {
    const starting = Object.keys(next.starting).sort((a, b) => next.starting[a]! - next.starting[b]!)[0];
    if (starting !== undefined) {
      delete next.starting[starting];
      name = starting;
      warm = true;
    }
  }
  if (name === undefined) {
    if (inUse(state) >= limits.maxInstances) return { result: { kind: "busy" }, next: state };
    name = coldName(taskId);
  }
  next.assigned[taskId] = { name, at: now };
  return { result: { kind: "container", name, warm }, next };
}

/** The task ended: its container is to be removed (the caller does so) and its instance is free again. */
export function release(state: PoolState, taskId: string, now: number): { name: string | undefined; next: PoolState } {
  const next = copy(state);
  const name = next.assigned[taskId]?.name;
  delete next.assigned[taskId];
  next.ended[taskId] = now;
  if (name) next.purge[name] = now + PURGE_DELAY_MS;
  return { name, next };
}

/** Names of new warm containers to start now, within the target and the instance limit. */
export function toStart(state: PoolState, limits: PoolLimits, newName: () => string): string[] {
  const missing = limits.warmTarget - state.warm.length - Object.keys(state.starting).length;
  const free = limits.maxInstances - inUse(state);
  return Array.from({ length: Math.max(0, Math.min(missing, free)) }, newName);
}

export function started(state: PoolState, name: string, at: number): PoolState {
  const next = copy(state);
  next.starting[name] = at;
  return next;
}

/**
 * A warm start finished: the container joins the warm ones, unless a task took it meanwhile
 * (then it is that task's already). A failed start frees its instance.
 */
export function startEnded(state: PoolState, name: string, ok: boolean): PoolState {
  if (state.starting[name] === undefined) return state;
  const next = copy(state);
  delete next.starting[name];
  if (ok) next.warm.push(name);
  return next;
}

/** A warm container that is no longer running (it crashed, or the platform moved it) leaves the pool. */
export function dropWarm(state: PoolState, name: string): PoolState {
  const next = copy(state);
  next.warm = next.warm.filter((warm) => warm !== name);
  return next;
}

/** Old tombstones and starts that never reported back go; the names whose storage is due for deletion are returned. */
export function housekeep(state: PoolState, now: number): { due: string[]; next: PoolState } {
  const next = copy(state);
  for (const [task, at] of Object.entries(next.ended)) if (now - at > ENDED_TTL_MS) delete next.ended[task];
  for (const [name, at] of Object.entries(next.starting)) if (now - at > START_STALE_MS) delete next.starting[name];
  const due = Object.entries(next.purge).filter(([, at]) => at <= now).map(([name]) => name);
  for (const name of due) delete next.purge[name];
  return { due, next };
}

/**
 * A container started cold for a task is named by the task (the edge recognises it without a
 * lookup); one started for the pool has a random name of its own (`warm-…`).
 */
export function coldName(taskId: string): string {
  return taskId;
}

function copy(state: PoolState): PoolState {
  return { assigned: { ...state.assigned }, warm: [...state.warm], starting: { ...state.starting }, ended: { ...state.ended }, purge: { ...state.purge } };
}
