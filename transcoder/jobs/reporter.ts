import type { FastifyBaseLogger } from "fastify";
import type { JobEvent } from "../../shared/schemas/jobs";
import type { Timings } from "../config";
import { backoff, retry } from "../lib/retry";
import { CallbackError, type EdgeClient } from "./edge-client";

/** A report before it gets its sequence number. */
export type Report = JobEvent extends infer Event ? (Event extends JobEvent ? Omit<Event, "seq"> : never) : never;
export type ProgressReport = Extract<Report, { type: "progress" }>;
export type TerminalReport = Extract<Report, { type: "completed" | "failed" | "handed_back" }>;

/**
 * While a job's end waits for the edge (its outputs and terminal report), tries come at least
 * this often, so that it lands within seconds of an outage's end and the task's heartbeat does
 * not lapse in between.
 */
export const OUTAGE_RETRY_MAX_DELAY_MS = 5_000;

export interface ReporterOptions {
  timings: Timings;
  /** The edge answered a report with `cancel: true`. */
  onCancel: () => void;
  log: FastifyBaseLogger;
}

/**
 * Sends one job's reports to `{callback_url}/events`, one at a time and in `seq` order: the
 * first report once the job has run `firstReportMs` (`started`, or the latest progress, which
 * also marks the task running), then progress at most every `progressIntervalMs`, a heartbeat
 * when nothing was sent for `heartbeatMs`, and the terminal report. A job that ends within
 * `firstReportMs` sends its terminal report alone: each report is a Worker request and a
 * Durable Object request (issue 12), and the edge takes the start of such a task from its
 * dispatch. Failed deliveries are retried with
 * exponential backoff; a progress report that keeps failing is dropped after a minute (or as
 * soon as a newer report is waiting), the terminal one is retried much longer.
 */
export class EventReporter {
  private nextSeq = 0;
  private readonly queue: JobEvent[] = [];
  private delivering: Promise<void> | undefined;
  private latest: ProgressReport = { type: "progress", progress: 0 };
  private lastQueuedAt = 0;
  private lastProgressAt = 0;
  private progressTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private finished = false;
  /** Until the first report is due, progress is only remembered. */
  private holding = true;
  private firstReportTimer: NodeJS.Timeout | undefined;
  private retryDeadline = Number.POSITIVE_INFINITY;
  /** Cuts a retry's wait short when the reporter is told to hurry. */
  private wake = new AbortController();

  constructor(
    private readonly client: Pick<EdgeClient, "postEvent">,
    private readonly options: ReporterOptions,
  ) {}

  start(): void {
    const { heartbeatMs, firstReportMs } = this.options.timings;
    this.lastQueuedAt = Date.now();
    this.firstReportTimer = setTimeout(() => {
      this.holding = false;
      if (this.latest.progress > 0) this.sendLatest();
      else this.enqueue({ type: "started" });
    }, firstReportMs);
    this.heartbeatTimer = setInterval(() => {
      if (!this.holding && Date.now() - this.lastQueuedAt >= heartbeatMs) this.enqueue({ ...this.latest });
    }, Math.max(10, Math.min(1000, heartbeatMs / 4)));
  }

  progress(update: ProgressReport): void {
    if (this.finished) return;
    // Estimates can wobble; the task's progress never goes backwards.
    this.latest = { ...update, progress: Math.max(this.latest.progress, update.progress) };
    if (this.holding) return;
    const wait = this.lastProgressAt + this.options.timings.progressIntervalMs - Date.now();
    if (wait <= 0) return this.sendLatest();
    this.progressTimer ??= setTimeout(() => this.sendLatest(), wait);
  }

  /** Queues the terminal report; resolves once it is delivered or given up on. */
  finish(report: TerminalReport): Promise<void> {
    if (!this.finished) {
      this.finished = true;
      this.stopTimers();
      // Progress not yet sent is stale once the job has ended.
      for (let index = this.queue.length - 1; index >= 0; index--) if (this.queue[index]!.type === "progress") this.queue.splice(index, 1);
      this.enqueue(report);
    }
    return this.idle();
  }

  /** From now on, a report that fails is retried for at most `withinMs` (shutting down). */
  hurry(withinMs: number): void {
    this.retryDeadline = Math.min(this.retryDeadline, Date.now() + withinMs);
    this.wake.abort();
    this.wake = new AbortController();
  }

  async idle(): Promise<void> {
    while (this.delivering) await this.delivering;
  }

  private sendLatest(): void {
    clearTimeout(this.progressTimer);
    this.progressTimer = undefined;
    if (this.finished) return;
    this.lastProgressAt = Date.now();
    this.enqueue({ ...this.latest });
  }

  private enqueue(report: Report): void {
    const event = { ...report, seq: this.nextSeq++ } as JobEvent;
    this.lastQueuedAt = Date.now();
    // Only the newest progress matters: one still waiting in the queue is replaced.
    if (event.type === "progress" && this.queue.at(-1)?.type === "progress") this.queue.pop();
    this.queue.push(event);
    this.pump();
  }

  private pump(): void {
    if (this.delivering) return;
    this.delivering = (async () => {
      for (let event = this.queue.shift(); event; event = this.queue.shift()) await this.deliver(event);
    })().finally(() => {
      this.delivering = undefined;
      if (this.queue.length > 0) this.pump();
    });
  }

  private async deliver(event: JobEvent): Promise<void> {
    const { timings, log } = this.options;
    const terminal = event.type === "completed" || event.type === "failed" || event.type === "handed_back";
    const giveUpAt = Date.now() + (terminal ? timings.terminalGiveUpMs : timings.progressGiveUpMs);
    const maxDelayMs = terminal ? Math.min(timings.retryMaxDelayMs, OUTAGE_RETRY_MAX_DELAY_MS) : timings.retryMaxDelayMs;
    const superseded = () => event.type === "progress" && this.queue.length > 0;
    try {
      const ack = await retry(() => this.client.postEvent(event), {
        retryable: (error) => (!(error instanceof CallbackError) || error.retryable) && !superseded(),
        delayMs: (attempt) => Math.min(backoff(attempt, timings.retryBaseMs, maxDelayMs), Math.min(giveUpAt, this.retryDeadline) - Date.now()),
        wake: () => this.wake.signal,
      });
      if (ack.cancel && !terminal) this.options.onCancel();
    } catch (error) {
      if (!superseded()) log.warn({ err: error, seq: event.seq, type: event.type }, "giving up on a job report");
    }
  }

  private stopTimers(): void {
    clearTimeout(this.firstReportTimer);
    clearInterval(this.heartbeatTimer);
    clearTimeout(this.progressTimer);
    this.progressTimer = undefined;
  }
}
