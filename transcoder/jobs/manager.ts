import { AppError } from "../../shared/errors";
import type { TranscodeJob } from "../../shared/schemas/jobs";
import { RecentIds } from "../lib/recent-ids";
import { Semaphore } from "../lib/semaphore";
import { sleep } from "../lib/sleep";
import { JobFailure } from "./failure";
import { HandBack, type JobDeps, JobRun } from "./job-run";
import { freeBytesNow } from "./workspace";

/** How many finished task ids are remembered, and for how long, to refuse redeliveries. */
const RECENT_IDS = 10_000;
const RECENT_MS = 24 * 60 * 60_000;
/** DELETE waits this long for ffmpeg to be gone before answering. */
const CANCEL_WAIT_MS = 2_000;
const BUSY_RETRY_AFTER_SECONDS = 5;
/** While shutting down, a terminal report is retried this long at most. */
const SHUTDOWN_REPORT_MS = 10_000;

/** Where a run held here stands: working on its outputs, or done and telling the edge so. */
type RunStage = "running" | "reporting";

/**
 * The jobs of this transcoder: admission (capacity, duplicates, draining, work space),
 * cancellation and shutdown. A job is known by its task and run: a run is accepted at most once per process
 * (running, still reporting, or recently finished), so a redelivered job never runs ffmpeg
 * twice, while a newer run of the task (the edge started it again) replaces an older one.
 * A run stays known here until the edge has acknowledged its end, so an edge outage never
 * makes finished work look lost.
 */
export class JobManager {
  /** Each task's current run, from acceptance until its terminal report is delivered or given up on. */
  private readonly runs = new Map<string, JobRun>();
  /** Runs whose work (download, ffmpeg, upload) is not over: what capacity counts. */
  private readonly working = new Set<JobRun>();
  private readonly recent = new RecentIds(RECENT_IDS, RECENT_MS);
  /** Every job whose terminal report is not out yet, including those whose work is over. */
  private readonly reporting = new Map<JobRun, Promise<void>>();
  private draining = false;
  /** Until when new jobs are refused because a job here ran out of work space. */
  private spaceCooldownUntil = 0;
  private readonly deps: JobDeps;

  constructor(deps: JobDeps) {
    this.deps = { ...deps, ffmpegSlots: deps.ffmpegSlots ?? new Semaphore(deps.config.maxConcurrentJobs) };
  }

  get running(): number {
    return this.working.size;
  }

  /** Jobs accepted at once: those running ffmpeg plus those preparing or uploading around them. */
  get capacity(): number {
    return this.deps.config.maxConcurrentJobs + this.deps.config.maxQueuedJobs;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** The task's current run here, if any (for tests and diagnostics). */
  get(taskId: string): JobRun | undefined {
    return this.runs.get(taskId);
  }

  /** Where run `run` of a task stands here (any run when `run` is undefined); undefined when it is not here. */
  stage(taskId: string, run?: number): RunStage | undefined {
    const job = this.runs.get(taskId);
    if (!job || (run !== undefined && job.runNumber !== run)) return undefined;
    return this.working.has(job) ? "running" : "reporting";
  }

  /**
   * Starts a job in the background, or throws the AppError to answer with. This very run
   * already here (a redelivery whose first answer was lost) is accepted again, starting nothing.
   */
  accept(job: TranscodeJob): void {
    const run = job.run ?? 0;
    if (this.draining) throw busy("This transcoder is shutting down and takes no new jobs.");
    const current = this.runs.get(job.task_id);
    if (current?.runNumber === run) return;
    if ((current && current.runNumber > run) || this.recent.has(job.task_id, run)) {
      throw new AppError("TASK_NOT_RUNNABLE", `Run ${run} of task ${job.task_id} already ran on this transcoder, or a later run did.`);
    }
    if (current) this.supersede(current);
    if (this.working.size >= this.capacity) throw busy(`This transcoder is running ${this.working.size} of ${this.capacity} jobs.`);
    this.checkWorkSpace();
    this.start(job);
  }

  /**
   * Cancels a task's run (`run`, or whichever is here); false when no such run is here. Waits
   * up to 2 s for ffmpeg to be gone. A run that is only reporting has nothing left to stop.
   */
  async cancel(taskId: string, run?: number): Promise<boolean> {
    if (!this.stage(taskId, run)) return false;
    const job = this.runs.get(taskId)!;
    job.cancel(new JobFailure("CANCELED", "The task was canceled."));
    await Promise.race([job.workDone, sleep(CANCEL_WAIT_MS)]);
    return true;
  }

  /**
   * Stops taking jobs, lets the running ones finish for up to `graceMs`, then stops the rest
   * and hands them back to the edge (which starts them again elsewhere at once, without
   * spending a retry), and waits for the last reports to go out. A job that finishes within
   * the grace reports its real result: its reports (and uploads) keep their retries for the
   * rest of the grace, so an edge outage during a rollout does not turn finished work into a
   * lost task; only past the grace are they cut to SHUTDOWN_REPORT_MS.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.draining = true;
    const graceEnds = Date.now() + graceMs;
    const finishing = Promise.all([...this.working].map((run) => run.workDone));
    const graceOver = new AbortController();
    await Promise.race([finishing, sleep(graceMs, graceOver.signal)]);
    graceOver.abort();
    for (const run of this.working) run.cancel(new HandBack("The transcoder shut down before the job finished; the task was handed back to run again."));
    const reportWithinMs = Math.max(SHUTDOWN_REPORT_MS, graceEnds - Date.now());
    for (const run of this.reporting.keys()) run.hurryReports(reportWithinMs);
    await finishing;
    await Promise.all(this.reporting.values());
  }

  /**
   * A job taken while WORK_ROOT is short of space would fail for the host's fault, so it is
   * refused (503, the edge tries again later or elsewhere) before anything is downloaded: while
   * free space is below MIN_FREE_WORK_BYTES, and for a while after a job here ran out of it.
   */
  private checkWorkSpace(): void {
    const { workRoot, minFreeWorkBytes } = this.deps.config;
    const free = freeBytesNow(workRoot);
    if (free < minFreeWorkBytes) throw busy(`Short of work space: WORK_ROOT has ${free} bytes free, below MIN_FREE_WORK_BYTES (${minFreeWorkBytes}).`);
    const wait = this.spaceCooldownUntil - Date.now();
    if (wait > 0) throw busy("Short of work space: a job on this transcoder just ran out of it.", Math.ceil(wait / 1000));
  }

  private start(job: TranscodeJob): void {
    const run = new JobRun(job, this.deps);
    this.runs.set(job.task_id, run);
    this.working.add(run);
    const reported = run.run().catch((error: unknown) => this.deps.log.error({ err: error, task_id: job.task_id }, "job crashed"));
    this.reporting.set(run, reported);
    void run.workDone.then(() => {
      this.working.delete(run);
      if (run.outOfSpace) this.spaceCooldownUntil = Date.now() + this.deps.config.workspaceFullCooldownMs;
    });
    void reported.finally(() => {
      this.reporting.delete(run);
      this.forget(run);
    });
  }

  /** An older run of a task the edge has started again: it stops, and only the new one counts. */
  private supersede(run: JobRun): void {
    run.cancel(new JobFailure("CANCELED", "A newer run of the task replaced this one."));
    this.working.delete(run);
    this.forget(run);
  }

  private forget(run: JobRun): void {
    if (this.runs.get(run.job.task_id) === run) this.runs.delete(run.job.task_id);
    this.recent.add(run.job.task_id, run.runNumber);
  }
}

/** 503: not taken now, worth trying again after `retryAfter` seconds. */
function busy(detail: string, retryAfter = BUSY_RETRY_AFTER_SECONDS): AppError {
  return new AppError("TRANSCODER_BUSY", detail, { retry_after: retryAfter }).withHeaders({ "Retry-After": String(retryAfter) });
}
