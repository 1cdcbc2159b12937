import { describe, expect, it } from "vitest";
import { applyEvent, initialState } from "../../../edge/tasks/state";

const now = "2026-11-21T10:00:00.000Z";
const pending = () => initialState({ task_id: "tsk_1", user_id: "usr_1", created_at: now });

describe("task state machine", () => {
  it("moves pending → running on started and keeps progress below 100 until completed", () => {
    const running = applyEvent(pending(), { type: "started", seq: 0 }, now)!;
    expect(running.status).toBe("running");
    const progressed = applyEvent(running, { type: "progress", seq: 1, progress: 100 }, now)!;
    expect(progressed.progress).toBe(99);
    const completed = applyEvent(progressed, { type: "completed", seq: 2, outputs: [{ filename: "a.mp4", size: 1 }] }, now)!;
    expect(completed).toMatchObject({ status: "completed", progress: 100, finished_at: now });
  });

  it("ignores duplicate and out-of-order reports", () => {
    const running = applyEvent(pending(), { type: "started", seq: 0 }, now)!;
    const at50 = applyEvent(running, { type: "progress", seq: 5, progress: 50 }, now)!;
    expect(applyEvent(at50, { type: "progress", seq: 5, progress: 60 }, now)).toBeUndefined();
    expect(applyEvent(at50, { type: "progress", seq: 3, progress: 20 }, now)).toBeUndefined();
  });

  it("never lowers progress", () => {
    const at50 = applyEvent(pending(), { type: "progress", seq: 1, progress: 50 }, now)!;
    expect(applyEvent(at50, { type: "progress", seq: 2, progress: 30 }, now)!.progress).toBe(50);
  });

  it("treats progress before started as the start", () => {
    const state = applyEvent(pending(), { type: "progress", seq: 1, progress: 10 }, now)!;
    expect(state).toMatchObject({ status: "running", started_at: now, progress: 10 });
  });

  it("never leaves an end state", () => {
    const failed = applyEvent(pending(), { type: "failed", seq: 0, error: "boom", error_code: "FFMPEG_FAILED" }, now)!;
    expect(failed.status).toBe("failed");
    expect(applyEvent(failed, { type: "completed", seq: 9, outputs: [{ filename: "a.mp4", size: 1 }] }, now)).toBeUndefined();
    expect(applyEvent(failed, { type: "started", seq: 10 }, now)).toBeUndefined();
  });
});
