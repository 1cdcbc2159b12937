import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import type { JobEvent } from "../../../shared/schemas/jobs";
import { DEFAULT_TIMINGS, type Timings } from "../../../transcoder/config";
import { CallbackError, type EventAck } from "../../../transcoder/jobs/edge-client";
import { EventReporter } from "../../../transcoder/jobs/reporter";

const silent = Fastify({ logger: false }).log;
const fast: Timings = { ...DEFAULT_TIMINGS, firstReportMs: 0, progressIntervalMs: 100, heartbeatMs: 100, retryBaseMs: 10, retryMaxDelayMs: 40, progressGiveUpMs: 150, terminalGiveUpMs: 500 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fake edge: records what arrives, fails as told. */
function fakeEdge(answer: (event: JobEvent, attempt: number) => EventAck | Error = () => ({ ok: true })) {
  const received: JobEvent[] = [];
  const attempts = new Map<number, number>();
  return {
    received,
    attempts,
    client: {
      async postEvent(event: JobEvent): Promise<EventAck> {
        const attempt = (attempts.get(event.seq) ?? 0) + 1;
        attempts.set(event.seq, attempt);
        const outcome = answer(event, attempt);
        if (outcome instanceof Error) throw outcome;
        received.push(event);
        return outcome;
      },
    },
  };
}

function reporter(edge: ReturnType<typeof fakeEdge>, timings: Partial<Timings> = {}, onCancel = () => {}) {
  return new EventReporter(edge.client, { timings: { ...fast, ...timings }, log: silent, onCancel });
}

const progress = (value: number) => ({ type: "progress" as const, progress: value });
const failed = { type: "failed" as const, error_code: "FFMPEG_FAILED" as const, error: "boom" };

describe("EventReporter", () => {
  it("sends started first and the terminal report last, with increasing seq", async () => {
    const edge = fakeEdge();
    const events = reporter(edge);
    events.start();
    await sleep(20);
    events.progress(progress(10));
    await sleep(150);
    events.progress(progress(60));
    await events.finish({ type: "completed", outputs: [{ filename: "a.mp4", size: 1 }] });
    expect(edge.received[0]?.type).toBe("started");
    expect(edge.received.at(-1)?.type).toBe("completed");
    const seqs = edge.received.map((event) => event.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it("sends a job that ends within firstReportMs as its terminal report alone", async () => {
    const edge = fakeEdge();
    const events = reporter(edge, { firstReportMs: 300, heartbeatMs: 50 });
    events.start();
    events.progress(progress(30));
    await sleep(150);
    events.progress(progress(70));
    await events.finish({ type: "completed", outputs: [{ filename: "a.mp4", size: 1 }] });
    await sleep(300);
    expect(edge.received.map((event) => event.type)).toEqual(["completed"]);
  });

  it("sends the latest progress as the first report once firstReportMs has passed, or started without progress", async () => {
    const edge = fakeEdge();
    const events = reporter(edge, { firstReportMs: 150, heartbeatMs: 10_000 });
    events.start();
    events.progress(progress(20));
    events.progress(progress(35));
    await sleep(60);
    expect(edge.received).toEqual([]);
    await sleep(200);
    await events.idle();
    expect(edge.received.map((event) => (event.type === "progress" ? event.progress : event.type))).toEqual([35]);
    await events.finish(failed);

    const quiet = fakeEdge();
    const silentJob = reporter(quiet, { firstReportMs: 50, heartbeatMs: 10_000 });
    silentJob.start();
    await sleep(150);
    await silentJob.idle();
    await silentJob.finish(failed);
    expect(quiet.received.map((event) => event.type)).toEqual(["started", "failed"]);
  });

  it("sends progress at most once per interval, always the latest value", async () => {
    const edge = fakeEdge();
    const events = reporter(edge, { heartbeatMs: 10_000 });
    events.start();
    for (let value = 1; value <= 50; value++) events.progress(progress(value));
    await sleep(250);
    await events.finish(failed);
    const sent = edge.received.filter((event) => event.type === "progress").map((event) => (event.type === "progress" ? event.progress : -1));
    expect(sent.length).toBeLessThanOrEqual(3);
    expect(sent.at(-1)).toBe(50);
  });

  it("never reports progress going backwards", async () => {
    const edge = fakeEdge();
    const events = reporter(edge, { progressIntervalMs: 1, heartbeatMs: 10_000 });
    events.start();
    events.progress(progress(40));
    await sleep(20);
    events.progress(progress(30));
    await sleep(20);
    await events.finish(failed);
    const sent = edge.received.flatMap((event) => (event.type === "progress" ? [event.progress] : []));
    expect(sent).toEqual([40, 40]);
  });

  it("sends a heartbeat when nothing else was sent for heartbeatMs", async () => {
    const edge = fakeEdge();
    const events = reporter(edge, { heartbeatMs: 100 });
    events.start();
    await sleep(500);
    await events.finish(failed);
    const beats = edge.received.filter((event) => event.type === "progress");
    expect(beats.length).toBeGreaterThanOrEqual(2);
    expect(beats.length).toBeLessThanOrEqual(6);
  });

  it("retries a terminal report until the edge takes it", async () => {
    const edge = fakeEdge((event, attempt) => (event.type === "failed" && attempt < 4 ? new CallbackError("503", true, 503) : { ok: true }));
    const events = reporter(edge);
    events.start();
    await events.finish(failed);
    expect(edge.received.at(-1)).toMatchObject({ type: "failed" });
    expect(edge.attempts.get(edge.received.at(-1)!.seq)).toBe(4);
  });

  it("gives up on progress after progressGiveUpMs, and on a refused report at once", async () => {
    const edge = fakeEdge((event) => (event.type === "progress" ? new CallbackError("503", true, 503) : event.type === "started" ? new CallbackError("409", false, 409) : { ok: true }));
    const events = reporter(edge, { heartbeatMs: 10_000 });
    events.start();
    await sleep(20);
    events.progress(progress(5));
    const started = Date.now();
    await events.idle();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(edge.attempts.get(0)).toBe(1);
    expect(edge.attempts.get(1)).toBeGreaterThan(1);
    await events.finish(failed);
    expect(edge.received.map((event) => event.type)).toEqual(["failed"]);
  });

  it("calls onCancel when the edge's ack says cancel", async () => {
    let cancels = 0;
    const edge = fakeEdge((event) => ({ ok: true, cancel: event.type === "started" }));
    const events = reporter(edge, {}, () => cancels++);
    events.start();
    await sleep(20);
    await events.idle();
    expect(cancels).toBe(1);
    await events.finish(failed);
    expect(cancels).toBe(1);
  });

  it("stops retrying soon once told to hurry (shutting down)", async () => {
    const edge = fakeEdge(() => new CallbackError("unreachable", true));
    const events = reporter(edge, { terminalGiveUpMs: 60_000, retryMaxDelayMs: 10_000 });
    events.start();
    const done = events.finish(failed);
    await sleep(50);
    const hurried = Date.now();
    events.hurry(100);
    await done;
    expect(Date.now() - hurried).toBeLessThan(1_000);
  });
});
