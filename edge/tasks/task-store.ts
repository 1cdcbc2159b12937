import type { JobSpec } from "../dispatch/job";
import type { TaskFanOut } from "./fan-out";
import { type Limits, type LiveState, nextCheck, onlyProgressMoved } from "./state";

const STATE_KEY = "state";
/** What the task runs, kept from its submission so that a dispatch reads nothing from D1. */
const JOB_KEY = "job";
/**
 * A running task's progress reports come twice a second; its state is written at most this
 * often for them (each write is two billed rows: the state and the alarm). Between writes the
 * latest state is held in memory, where polls and watchers read it; any other change and the
 * alarm write it. An object evicted in between has lost at most this much progress, and its
 * heartbeat deadline runs from at most this much earlier.
 */
const PROGRESS_WRITE_MS = 10_000;

export interface TaskStoreDeps {
  /** The task's deadlines, which its next check is computed from. */
  limits: (state: LiveState) => Limits;
  /** When the outbox next retries a webhook hand-over, if it holds one. */
  outboxRetryAt: (now: number) => Promise<number | undefined>;
}

/**
 * Where a task's object keeps its live state and its job, and when its alarm rings next: every
 * write tells the watchers and sets the alarm; a change of progress alone is held in memory
 * between writes (PROGRESS_WRITE_MS).
 */
export class TaskStore {
  /** The state when only progress moved since it was last written. */
  private held: LiveState | undefined;
  private writtenAt = 0;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly fanOut: TaskFanOut,
    private readonly deps: TaskStoreDeps,
  ) {}

  async load(): Promise<LiveState | undefined> {
    return this.held ?? this.storage.get<LiveState>(STATE_KEY);
  }

  job(): Promise<JobSpec | undefined> {
    return this.storage.get<JobSpec>(JOB_KEY);
  }

  keepJob(job: JobSpec): Promise<void> {
    return this.storage.put(JOB_KEY, job);
  }

  /** Writes `state` together with `entries` (one atomic put), then tells the watchers and sets the alarm. */
  async save(state: LiveState, entries: Record<string, unknown> = {}): Promise<void> {
    const previous = await this.load();
    this.held = undefined;
    await this.storage.put({ [STATE_KEY]: state, ...entries });
    this.writtenAt = Date.now();
    await this.schedule(state);
    this.fanOut.notify(previous, state);
  }

  /** Writes a change, or holds it in memory when only progress moved since a recent write. */
  async update(previous: LiveState, next: LiveState): Promise<void> {
    if (!onlyProgressMoved(previous, next) || Date.now() - this.writtenAt >= PROGRESS_WRITE_MS) return this.save(next);
    this.held = next;
    this.fanOut.notify(previous, next);
  }

  /** Nothing due: sets the next alarm, writing a held state on the way. */
  checkAgainLater(state: LiveState): Promise<void> {
    return this.held ? this.save(state) : this.schedule(state);
  }

  async schedule(state: LiveState): Promise<void> {
    const now = Date.now();
    const next = this.fanOut.nextAlarm(nextCheck(state, now, this.deps.limits(state)), state, now);
    const at = next ?? (await this.deps.outboxRetryAt(now));
    if (at !== undefined) await this.storage.setAlarm(at);
    else await this.storage.deleteAlarm();
  }

  /** Forgets the task entirely: state, job, outbox and alarm. */
  async erase(): Promise<void> {
    this.held = undefined;
    await this.storage.deleteAlarm();
    await this.storage.deleteAll();
  }
}
