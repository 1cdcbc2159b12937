import { describe, expect, it } from "vitest";
import { ENDED_TTL_MS, PURGE_DELAY_MS, START_STALE_MS, claim, dropWarm, emptyPool, housekeep, inUse, release, startEnded, started, toStart } from "../../../edge/dispatch/pool-state";

const limits = { maxInstances: 3, warmTarget: 2 };
let names = 0;
const newName = () => `warm-${++names}`;

function warmPool(count: number) {
  let state = emptyPool();
  for (let i = 0; i < count; i++) {
    const name = newName();
    state = startEnded(started(state, name, 0), name, true);
  }
  return state;
}

describe("the container pool's bookkeeping", () => {
  it("gives a task the oldest warm container, and the same container again for its next run", () => {
    const state = warmPool(2);
    const first = claim(state, "task-a", limits, 10);
    expect(first.result).toEqual({ kind: "container", name: state.warm[0], warm: true });
    expect(first.next.warm).toEqual([state.warm[1]]);
    expect(claim(first.next, "task-a", limits, 20).result).toEqual({ kind: "container", name: state.warm[0], warm: false });
  });

  it("joins a container still starting for the pool before it starts one cold", () => {
    const state = started(emptyPool(), "warm-starting", 5);
    const { result, next } = claim(state, "task-a", limits, 10);
    expect(result).toEqual({ kind: "container", name: "warm-starting", warm: true });
    expect(next.starting).toEqual({});
  });

  it("starts a container cold, named by the task, when none is warm and an instance is free", () => {
    expect(claim(emptyPool(), "task-a", limits, 0).result).toEqual({ kind: "container", name: "task-a", warm: false });
  });

  it("answers busy, changing nothing, when every instance is in use", () => {
    let state = emptyPool();
    for (const task of ["a", "b", "c"]) state = claim(state, task, limits, 0).next;
    expect(inUse(state)).toBe(3);
    const { result, next } = claim(state, "d", limits, 0);
    expect(result).toEqual({ kind: "busy" });
    expect(next).toBe(state);
  });

  it("frees the instance on release, refuses a late claim for the released task, and purges its container's storage after a delay", () => {
    const claimed = claim(emptyPool(), "task-a", limits, 0).next;
    const { name, next } = release(claimed, "task-a", 1_000);
    expect(name).toBe("task-a");
    expect(inUse(next)).toBe(0);
    expect(claim(next, "task-a", limits, 2_000).result).toEqual({ kind: "ended" });
    expect(housekeep(next, 1_000 + PURGE_DELAY_MS - 1).due).toEqual([]);
    const later = housekeep(next, 1_000 + PURGE_DELAY_MS);
    expect(later.due).toEqual(["task-a"]);
    expect(later.next.purge).toEqual({});
  });

  it("forgets a released task after ENDED_TTL_MS and a start that never reported back after START_STALE_MS", () => {
    const state = started(release(emptyPool(), "task-a", 0).next, "warm-lost", 0);
    expect(housekeep(state, ENDED_TTL_MS + 1).next.ended).toEqual({});
    expect(housekeep(state, START_STALE_MS + 1).next.starting).toEqual({});
  });

  it("starts warm containers up to the target, never past the instance limit", () => {
    expect(toStart(emptyPool(), limits, newName)).toHaveLength(2);
    const twoBusy = claim(claim(emptyPool(), "a", limits, 0).next, "b", limits, 0).next;
    expect(toStart(twoBusy, limits, newName)).toHaveLength(1);
    expect(toStart(warmPool(2), limits, newName)).toHaveLength(0);
    expect(toStart(emptyPool(), { maxInstances: 3, warmTarget: 0 }, newName)).toHaveLength(0);
  });

  it("a warm start that failed frees its instance; one that a task took meanwhile stays the task's", () => {
    const failed = startEnded(started(emptyPool(), "warm-x", 0), "warm-x", false);
    expect(inUse(failed)).toBe(0);
    const taken = claim(started(emptyPool(), "warm-y", 0), "task-a", limits, 1).next;
    const after = startEnded(taken, "warm-y", true);
    expect(after.warm).toEqual([]);
    expect(after.assigned["task-a"]?.name).toBe("warm-y");
  });

  it("drops a warm container that stopped", () => {
    const state = warmPool(2);
    expect(dropWarm(state, state.warm[0]!).warm).toEqual([state.warm[1]]);
  });
});
