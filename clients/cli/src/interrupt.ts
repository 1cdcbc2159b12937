import { FFedgeError, type Task } from "../../sdk/src/index";
import { EXIT, Interrupted } from "./errors";
import type { ProgressReporter } from "./progress";

/**
 * Runs `work` with a signal that the first Ctrl-C aborts (the SDK then cancels what it started);
 * a second Ctrl-C exits at once. `line` says what the interruption left behind.
 */
export async function withInterrupt<T>(reporter: ProgressReporter, work: (signal: AbortSignal) => Promise<T>, line: () => string | Promise<string>): Promise<T> {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) {
      reporter.stop();
      process.stderr.write("ffedge: Interrupted\n");
      process.exit(EXIT.interrupted);
    }
    controller.abort();
  };
  process.on("SIGINT", onSigint);
  try {
    return await work(controller.signal);
  } catch (error) {
    if (controller.signal.aborted) throw new Interrupted(await line());
    throw error;
  } finally {
    process.off("SIGINT", onSigint);
    reporter.stop();
  }
}

/** The error a failed task ends the CLI with, shaped as the SDK's run() rejects. */
export function failedTask(task: Task): FFedgeError {
  return new FFedgeError({ type: "about:blank", status: 0, code: task.error_code ?? "INTERNAL", title: "Task failed", detail: task.error ?? `Task ${task.task_id} failed.`, task });
}
