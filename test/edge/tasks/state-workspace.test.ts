import { describe, expect, it } from "vitest";
import { MAX_HANDBACKS, MAX_RETRIES, applyEvent, claim, dispatched, initialState } from "../../../edge/tasks/state";

// Pure functions: a run handed back because its transcoder's work space ran out.
const now = "2026-11-25T10:00:00.000Z";
const t0 = Date.parse(now);
const running = () => applyEvent(dispatched(claim(initialState({ task_id: "tsk_1", user_id: "usr_1", created_at: now }), t0).next!, "http://t1", t0), { type: "started", seq: 0 }, now)!;
const outOfSpace = { type: "handed_back", seq: 1, reason: "ffmpeg could not write its outputs: no space left in the transcoder's work directory.", error_code: "WORKSPACE_FULL" } as const;

describe("a run handed back because its transcoder's work space ran out", () => {
  it("starts the task again at once, spending a hand-back and no retry", () => {
    expect(applyEvent(running(), outOfSpace, now)).toMatchObject({ status: "pending", dispatch: "queued", handed_back: 1, retries: 1, error_code: null });
  });

  it("fails the task WORKSPACE_FULL, saying so, once its hand-backs are spent, without spending its retries first", () => {
    let state = running();
    for (let handBack = 1; handBack <= MAX_HANDBACKS; handBack++) {
      state = applyEvent(state, outOfSpace, now)!;
      expect(state.status).toBe("pending");
      state = applyEvent(state, { type: "started", seq: 0 }, now)!;
    }
    const ended = applyEvent(state, outOfSpace, now)!;
    expect(ended).toMatchObject({ status: "failed", error_code: "WORKSPACE_FULL" });
    expect(ended.error).toMatch(new RegExp(`no space left.*handed back ${MAX_HANDBACKS + 1} times; no transcoder had room for it`));
    expect(ended.retries - (ended.handed_back ?? 0)).toBeLessThan(MAX_RETRIES);
  });
});
