import { AppError } from "../../shared/errors";
import type { TranscodeJob } from "../../shared/schemas/jobs";
import { RecentIds } from "../lib/recent-ids";
import { Semaphore } from "../lib/semaphore";
import { sleep } from "../lib/sleep";
import { JobFailure } from "./failure";
import { type JobDeps, JobRun } from "./job-run";

/** How many finished task ids are remembered, and for how long, to refuse redeliveries. */
const RECENT_IDS = 10_000;
const RECENT_MS = 24 * 60 * 60_000;
/** DELETE waits this long for ffmpeg to be gone before answering. */
const CANCEL_WAIT_MS = 2_000;
const BUSY_RETRY_AFTER_SECONDS = 5;
/** While shutting down, a terminal report is retried this long at most. */
const SHUTDOWN_REPORT_MS = 10_000;

/**
 * The jobs of this transcoder: admission (capacity, duplicates, draining), cancellation and
 * shutdown. A task id is accepted at most once per process, running or recently finished, so
 * a redelivered queue message never runs ffmpeg twice.
 */
export class JobManager {
  private readonly runs = new Map<string, JobRun>();
  private readonly recent = new RecentIds(RECENT_IDS, RECENT_MS);
  /** Every job whose terminal report is not out yet, including those whose work is over. */
  private readonly reporting = new Map<JobRun, Promise<void>>();
  private draining = false;
  private readonly deps: JobDeps;

  constructor(deps: JobDeps) {
    this.deps = { ...deps, ffmpegSlots: deps.ffmpegSlots ?? new Semaphore(deps.config.maxConcurrentJobs) };
  }

  get running(): number {
    return this.runs.size;
  }

  /** Jobs accepted at once: those running ffmpeg plus those preparing or uploading around them. */
  get capacity(): number {
    return this.deps.config.maxConcurrentJobs + this.deps.config.maxQueuedJobs;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  /** The running job of a task, if any (for tests and diagnostics). */
  get(taskId: string): JobRun | undefined {
    return this.runs.get(taskId);
  }

  /** Starts a job in the background, or throws the AppError to answer with. */
  accept(job: TranscodeJob): void {
    if (this.draining) throw busy("This transcoder is shutting down and takes no new jobs.");
    if (this.runs.has(job.task_id)) throw new AppError("TASK_NOT_RUNNABLE", `Task ${job.task_id} is already running on this transcoder.`);
    if (this.recent.has(job.task_id)) throw new AppError("TASK_NOT_RUNNABLE", `Task ${job.task_id} already ran on this transcoder.`);
    if (this.runs.size >= this.capacity) throw busy(`This transcoder is running ${this.runs.size} of ${this.capacity} jobs.`);
    const run = new JobRun(job, this.deps);
    this.runs.set(job.task_id, run);
    const reported = run.run().catch((error: unknown) => this.deps.log.error({ err: error, task_id: job.task_id }, "job crashed"));
    this.reporting.set(run, reported);
    void reported.finally(() => this.reporting.delete(run));
    void run.workDone.then(() => {
      this.runs.delete(job.task_id);
      this.recent.add(job.task_id);
    });
  }

  /** Cancels a running job; false when no such job runs here. Waits up to 2 s for ffmpeg to be gone. */
  async cancel(taskId: string): Promise<boolean> {
    const run = this.runs.get(taskId);
    if (!run) return false;
    run.cancel(new JobFailure("CANCELED", "The task was canceled."));
    await Promise.race([run.workDone, sleep(CANCEL_WAIT_MS)]);
    return true;
  }

  /**
   * Stops taking jobs, lets the running ones finish for up to `graceMs`, then stops the rest
   * (reported as failed, so the edge need not wait for a heartbeat to lapse) and waits for the
   * last reports to go out.
   */
  async shutdown(graceMs: number): Promise<void> {
    this.draining = true;
    const finishing = Promise.all([...this.runs.values()].map((run) => run.workDone));
    await Promise.race([finishing, sleep(graceMs)]);
    for (const run of this.runs.values()) {
      run.cancel(new JobFailure("INTERNAL", "The transcoder shut down before the job finished; the job was stopped."));
    }
    for (const run of this.reporting.keys()) run.hurryReports(SHUTDOWN_REPORT_MS);
    await finishing;
    await Promise.all(this.reporting.values());
  }
}

function busy(detail: string): AppError {
  return new AppError("TRANSCODER_BUSY", detail, { retry_after: BUSY_RETRY_AFTER_SECONDS }).withHeaders({ "Retry-After": String(BUSY_RETRY_AFTER_SECONDS) });
}
