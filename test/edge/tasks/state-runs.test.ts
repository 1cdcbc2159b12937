import { describe, expect, it } from "vitest";
import { ENDING_WINDOW_MS, MAX_HANDBACKS, MAX_RETRIES, PROBE_EVERY_MS, applyEvent, claim, dispatched, dueAction, initialState, lostTranscoder, nextCheck } from "../../../edge/tasks/state";

// Pure functions: how a run that ends unfinished is started again.
const now = "2026-11-21T10:00:00.000Z";
const t0 = Date.parse(now);
const running = () => applyEvent(dispatched(claim(initialState({ task_id: "tsk_1", user_id: "usr_1", created_at: now }), t0).next!, "http://t1", t0), { type: "started", seq: 0 }, now)!;

describe("a run handed back by a transcoder that shuts down", () => {
  it("starts the task again at once as a new run, without spending a retry", () => {
    let state = running();
    for (let loss = 1; loss <= MAX_RETRIES; loss++) state = applyEvent(lostTranscoder(state, "gone.", t0), { type: "started", seq: 0 }, now)!;
    const handedBack = applyEvent(state, { type: "handed_back", seq: 1, reason: "The transcoder shut down." }, now)!;
    expect(handedBack).toMatchObject({ status: "pending", dispatch: "queued", retries: MAX_RETRIES + 1, handed_back: 1, error_code: null });
  });

  it("counts hand-backs past MAX_HANDBACKS as losses, so a task cannot bounce forever", () => {
    let state = running();
    for (let handBack = 1; handBack <= MAX_HANDBACKS + MAX_RETRIES; handBack++) {
      state = applyEvent(state, { type: "handed_back", seq: 1, reason: "shut down" }, now)!;
      expect(state.status).toBe("pending");
      state = applyEvent(state, { type: "started", seq: 0 }, now)!;
    }
    expect(applyEvent(state, { type: "handed_back", seq: 1, reason: "shut down" }, now)).toMatchObject({ status: "failed", error_code: "TRANSCODER_LOST" });
  });
});

describe("a silent run whose transcoder may still be finishing", () => {
  const limits = { heartbeatTimeoutMs: 3_000, taskTimeoutMs: 600_000 };

  it("is probed once its heartbeat lapses, again every few seconds, and given up only when the probe says so or the ending window is over", () => {
    expect(nextCheck(running(), t0, limits)).toBe(t0 + limits.heartbeatTimeoutMs + 1);
    expect(dueAction(running(), t0 + limits.heartbeatTimeoutMs + 1, limits)).toEqual({ kind: "probe", target: "http://t1" });
    expect(nextCheck(running(), t0 + 60_000, limits)).toBe(t0 + 60_000 + PROBE_EVERY_MS);
    expect(dueAction(running(), t0 + limits.heartbeatTimeoutMs + ENDING_WINDOW_MS + 1, limits)).toMatchObject({ kind: "lost" });
  });
});
