import { describe, expect, it } from "vitest";
import {
  CLAIM_LEASE_MS, ENDING_WINDOW_MS, MAX_RETRIES, UNREACHABLE_DEADLINE_MS, PENDING_DEADLINE_MS, PROBE_AFTER_MS, QUEUED_RESEND_MS, START_DEADLINE_MS, applyEvent, claim, dispatched, dueAction, initialState, lostTranscoder,
  nextCheck, onlyProgressMoved, queued, unreachable, waiting,
} from "../../../edge/tasks/state";

// Pure functions: this file runs in the node project, without workerd.
const now = "2026-11-21T10:00:00.000Z";
const t0 = Date.parse(now);
const limits = { heartbeatTimeoutMs: 60_000, taskTimeoutMs: 600_000 };
const pending = () => initialState({ task_id: "tsk_1", user_id: "usr_1", created_at: now });
const running = () => applyEvent(dispatched(claim(pending(), t0).next!, "http://t1", t0), { type: "started", seq: 0 }, now)!;

describe("task state machine", () => {
  it("moves pending → running on started and keeps progress below 100 until completed", () => {
    const started = applyEvent(pending(), { type: "started", seq: 0 }, now)!;
    expect(started.status).toBe("running");
    const progressed = applyEvent(started, { type: "progress", seq: 1, progress: 100 }, now)!;
    expect(progressed.progress).toBe(99);
    const completed = applyEvent(progressed, { type: "completed", seq: 2, outputs: [{ filename: "a.mp4", size: 1 }] }, now)!;
    expect(completed).toMatchObject({ status: "completed", progress: 100, finished_at: now });
  });

  it("ignores duplicate and out-of-order reports", () => {
    const started = applyEvent(pending(), { type: "started", seq: 0 }, now)!;
    const at50 = applyEvent(started, { type: "progress", seq: 5, progress: 50 }, now)!;
    expect(applyEvent(at50, { type: "progress", seq: 5, progress: 60 }, now)).toBeUndefined();
    expect(applyEvent(at50, { type: "progress", seq: 3, progress: 20 }, now)).toBeUndefined();
  });

  it("tells a running task's progress report, which may be held in memory, from every other change", () => {
    const at10 = applyEvent(running(), { type: "progress", seq: 1, progress: 10 }, now)!;
    const later = new Date(t0 + 500).toISOString();
    expect(onlyProgressMoved(at10, applyEvent(at10, { type: "progress", seq: 2, progress: 20 }, later)!)).toBe(true);
    // The first report of a run moves it to running; the end, a failure, a retry or a redispatch are changes of their own.
    expect(onlyProgressMoved(pending(), applyEvent(pending(), { type: "progress", seq: 1, progress: 10 }, now)!)).toBe(false);
    expect(onlyProgressMoved(at10, applyEvent(at10, { type: "completed", seq: 2, outputs: [] }, later)!)).toBe(false);
    expect(onlyProgressMoved(at10, applyEvent(at10, { type: "failed", seq: 2, error: "x", error_code: "FFMPEG_FAILED" }, later)!)).toBe(false);
    expect(onlyProgressMoved(at10, lostTranscoder(at10, "gone", t0 + 1000))).toBe(false);
    expect(onlyProgressMoved(at10, dispatched(at10, "http://t2", t0 + 1000))).toBe(false);
  });

  it("never lowers progress", () => {
    const at50 = applyEvent(pending(), { type: "progress", seq: 1, progress: 50 }, now)!;
    expect(applyEvent(at50, { type: "progress", seq: 2, progress: 30 }, now)!.progress).toBe(50);
  });

  it("treats progress before started as the start", () => {
    const state = applyEvent(pending(), { type: "progress", seq: 1, progress: 10 }, now)!;
    expect(state).toMatchObject({ status: "running", started_at: now, progress: 10 });
  });

  it("dates a run that reports only its end (a job shorter than the transcoder's first-report delay) from its dispatch", () => {
    const handedOver = dispatched(claim(pending(), t0).next!, "http://t1", t0 + 2_000);
    const later = new Date(t0 + 2_600).toISOString();
    expect(applyEvent(handedOver, { type: "completed", seq: 0, outputs: [{ filename: "a.mp4", size: 1 }] }, later)).toMatchObject({ status: "completed", started_at: new Date(t0 + 2_000).toISOString(), finished_at: later });
    expect(applyEvent(handedOver, { type: "failed", seq: 0, error: "boom", error_code: "FFMPEG_FAILED" }, later)).toMatchObject({ status: "failed", started_at: new Date(t0 + 2_000).toISOString() });
    expect(applyEvent(handedOver, { type: "progress", seq: 0, progress: 40 }, later)).toMatchObject({ status: "running", started_at: new Date(t0 + 2_000).toISOString() });
  });

  it("never leaves an end state", () => {
    const failed = applyEvent(pending(), { type: "failed", seq: 0, error: "boom", error_code: "FFMPEG_FAILED" }, now)!;
    expect(failed.status).toBe("failed");
    expect(applyEvent(failed, { type: "completed", seq: 9, outputs: [{ filename: "a.mp4", size: 1 }] }, now)).toBeUndefined();
    expect(applyEvent(failed, { type: "started", seq: 10 }, now)).toBeUndefined();
  });

  it("lets one delivery claim a dispatch until its lease runs out", () => {
    const claimed = claim(pending(), t0);
    expect(claimed.result).toEqual({ ok: true, run: 0 });
    expect(claim(claimed.next!, t0 + 1000).result).toEqual({ ok: false, reason: "claimed" });
    expect(claim(claimed.next!, t0 + CLAIM_LEASE_MS).result).toEqual({ ok: true, run: 0 });
    expect(claim(dispatched(claimed.next!, "http://t1", t0), t0).result).toEqual({ ok: false, reason: "dispatched" });
  });

  it("queues the job again when its message was not taken in time", () => {
    expect(dueAction(pending(), t0 + QUEUED_RESEND_MS - 1, limits)).toBeUndefined();
    expect(dueAction(pending(), t0 + QUEUED_RESEND_MS, limits)).toEqual({ kind: "resend" });
    expect(nextCheck(pending(), t0, limits)).toBe(t0 + QUEUED_RESEND_MS);
    expect(nextCheck(queued(pending(), t0 + 5000), t0 + 5000, limits)).toBe(t0 + 5000 + QUEUED_RESEND_MS);
  });

  it("retries an unreachable dispatch within seconds, never slower than every 5 s", () => {
    let state = claim(pending(), t0).next!;
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      state = unreachable(state, t0);
      delays.push(Date.parse(state.resend_at) - t0);
      state = claim(state, t0).next!;
    }
    expect(delays).toEqual([1000, 2000, 4000, 5000, 5000, 5000]);
  });

  it("re-queues a waiting task whose wake-up was lost, and a claim whose consumer died", () => {
    const waited = waiting(claim(pending(), t0).next!, t0);
    expect(dueAction(waited, t0 + 59_000, limits)).toBeUndefined();
    expect(dueAction(waited, t0 + 60_000, limits)).toEqual({ kind: "resend" });
    expect(dueAction(claim(pending(), t0).next!, t0 + CLAIM_LEASE_MS, limits)).toEqual({ kind: "resend" });
  });

  it("fails a first dispatch that finds no transcoder for minutes, and a retried run sooner", () => {
    const once = unreachable(claim(pending(), t0).next!, t0);
    const again = unreachable(claim(once, t0 + 60_000).next!, t0 + 60_000);
    expect(again.unreachable_since).toBe(now);
    expect(dueAction(again, t0 + UNREACHABLE_DEADLINE_MS, limits)).toEqual({ kind: "resend" });
    expect(dueAction(again, t0 + UNREACHABLE_DEADLINE_MS + 1, limits)).toMatchObject({ kind: "fail", code: "DISPATCH_FAILED" });
    const retried = unreachable(claim(lostTranscoder(running(), "gone.", t0), t0).next!, t0);
    expect(dueAction(retried, t0 + limits.heartbeatTimeoutMs + 1, limits)).toMatchObject({ kind: "fail", code: "TRANSCODER_LOST" });
    expect(dispatched(claim(again, t0).next!, "http://t1", t0).unreachable_since).toBeNull();
  });

  it("fails a task no transcoder took within the pending deadline", () => {
    expect(dueAction(pending(), t0 + PENDING_DEADLINE_MS + 1, limits)).toMatchObject({ kind: "fail", code: "DISPATCH_FAILED" });
  });

  it("checks on a silent run, and gives it up after the heartbeat timeout once its transcoder no longer answers for it", () => {
    expect(dueAction(running(), t0 + PROBE_AFTER_MS - 1, limits)).toBeUndefined();
    expect(dueAction(running(), t0 + PROBE_AFTER_MS + 1, limits)).toEqual({ kind: "probe", target: "http://t1" });
    expect(dueAction(running(), t0 + 60_001, limits)).toEqual({ kind: "probe", target: "http://t1" });
    expect(dueAction(running(), t0 + 60_001 + ENDING_WINDOW_MS, limits)).toMatchObject({ kind: "lost" });
    expect(dueAction({ ...running(), dispatch_target: null }, t0 + 60_001, limits)).toMatchObject({ kind: "lost" });
    const accepted = dispatched(claim(pending(), t0).next!, "http://t1", t0);
    expect(dueAction(accepted, t0 + PROBE_AFTER_MS + 1, limits)).toEqual({ kind: "probe", target: "http://t1" });
    expect(dueAction(accepted, t0 + START_DEADLINE_MS + 1, limits)).toMatchObject({ kind: "lost" });
  });

  it("starts a lost run again, counting it, and fails TRANSCODER_LOST after the last retry", () => {
    let state = running();
    for (let retry = 1; retry <= MAX_RETRIES; retry++) {
      state = lostTranscoder(state, "gone.", t0);
      expect(state).toMatchObject({ status: "pending", retries: retry, progress: 0, started_at: null, last_seq: -1, dispatch: "queued", dispatch_target: null });
      state = applyEvent(state, { type: "started", seq: 0 }, now)!;
    }
    expect(lostTranscoder(state, "gone.", t0)).toMatchObject({ status: "failed", error_code: "TRANSCODER_LOST", retries: MAX_RETRIES });
  });

  it("retries a run whose transcoder reports that it lost the job", () => {
    const next = applyEvent(running(), { type: "failed", seq: 1, error: "shut down", error_code: "TRANSCODER_LOST" }, now)!;
    expect(next).toMatchObject({ status: "pending", retries: 1 });
  });
});
