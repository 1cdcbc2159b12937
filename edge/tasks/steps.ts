import type { Task } from "../../shared/schemas/tasks";
import type { LiveState, StoredOutput } from "./state";

/** A step as the task keeps it: its command as submitted, and whether its outputs are published. */
export interface StoredStep {
  command: string;
  publish: boolean;
}

/** The `steps` column of a chained task's record (JSON); null for a task of one command. */
export function storedSteps(steps: readonly StoredStep[] | undefined): string | null {
  return steps ? JSON.stringify(steps.map(({ command, publish }) => ({ command, publish }))) : null;
}

/** The steps of a task's record; undefined for a task of one command. */
export function stepsOfRecord(row: { steps?: string | null }): StoredStep[] | undefined {
  if (!row.steps) return undefined;
  const steps = JSON.parse(row.steps) as unknown;
  return Array.isArray(steps) ? (steps as StoredStep[]) : undefined;
}

/** What `command` shows for a chained task: its steps' commands, one a line. */
export function shownCommand(steps: readonly StoredStep[]): string {
  return steps.map((step) => step.command).join("\n");
}

const FAILED_STEP = /^step ([0-9]{1,2}): /;

/**
 * Each step of a presented task: those before the current one completed, the current one
 * running (with its own progress) or failed (with the task's error), the rest pending. The step
 * a task failed at is named by its error (`step K: …`, the transcoder's words) or, for an end
 * the edge decided (a time limit, a cancel), by the last step its run reported, or else by the
 * task's progress. A failed step shows the progress it reached: what the task's overall progress
 * (its steps share it equally) leaves for it.
 */
export function presentSteps(steps: readonly StoredStep[], task: Task, stored: readonly StoredOutput[] | null, live: LiveState | undefined): NonNullable<Task["steps"]> {
  const published = new Map((task.outputs ?? []).map((output) => [output.filename, output]));
  const failedAt = task.status === "failed" ? failedStep(steps.length, task, live) : Number.NaN;
  const current = task.status === "running" ? (live?.step ?? 0) : task.status === "completed" ? steps.length : failedAt;
  return steps.map((step, index) => {
    const status = index < current ? "completed" : index === current && task.status === "running" ? "running" : index === failedAt ? "failed" : "pending";
    const outputs = (stored ?? []).filter((output) => (output.step ?? steps.length - 1) === index).flatMap((output) => published.get(output.filename) ?? []);
    const reached = status === "running" ? (live?.step_progress ?? 0) : status === "failed" ? task.progress * steps.length - index * 100 : 0;
    return {
      index,
      command: step.command,
      status,
      progress: status === "completed" ? 100 : Math.max(0, Math.min(99, Math.floor(reached))),
      publish: step.publish,
      outputs,
      ...(status === "failed" && task.error ? { error: task.error } : {}),
    };
  });
}

/**
 * A failed chained task's progress: at least what its completed steps and the failed step's own
 * progress make together (a 3-step chain failing at once in step 1 has done 33 %), even when the
 * run ended before it could report it.
 */
export function chainProgress(task: Task): number {
  const steps = task.steps;
  if (task.status !== "failed" || !steps?.length) return task.progress;
  const done = steps.reduce((sum, step) => sum + (step.status === "completed" ? 100 : step.status === "failed" ? step.progress : 0), 0);
  return Math.max(task.progress, Math.min(99, Math.floor(done / steps.length)));
}

function failedStep(count: number, task: Task, live: LiveState | undefined): number {
  const named = FAILED_STEP.exec(task.error ?? "")?.[1];
  if (named !== undefined) return Number(named);
  if (live?.step !== undefined) return live.step;
  if (!task.started_at) return Number.NaN;
  return Math.min(count - 1, Math.floor((task.progress * count) / 100));
}
