import { FFedgeError } from "../../sdk/src/index";

export const EXIT = { ok: 0, failure: 1, usage: 2, interrupted: 130 } as const;

/** A mistake in how the CLI was called or configured: nothing was sent, exit 2. */
export class UsageError extends Error {
  constructor(
    readonly title: string,
    readonly detail: string,
  ) {
    super(`${title}: ${detail}`);
  }
}

/** Ctrl-C: the line to print has been decided already. */
export class Interrupted extends Error {
  constructor(readonly line: string) {
    super(line);
  }
}

export const missingKey = () => new UsageError("No API key", "run `ffedge login` or set FFEDGE_API_KEY");

/** The one line a failure prints, and the exit code it ends with; the stack only on request. */
export function describeFailure(error: unknown): { line: string; exitCode: number } {
  if (error instanceof Interrupted) return { line: error.line, exitCode: EXIT.interrupted };
  if (error instanceof UsageError) return { line: `ffedge: ${error.title}: ${error.detail}`, exitCode: EXIT.usage };
  if (error instanceof FFedgeError && error.code === "DELIVERY_FAILED" && error.status === 0) return { line: `ffedge: ${error.title}: ${oneLine(error.detail)}`, exitCode: EXIT.failure };
  if (error instanceof FFedgeError) {
    const task = (error.problem as { task?: { task_id: string; error?: string } }).task;
    if (task) {
      const reason = (task.error ?? error.detail).split("\n")[0]!.trim();
      return { line: `ffedge: ${error.title}: ${reason} (${error.code}; ffmpeg's output: ffedge tasks logs ${task.task_id})`, exitCode: EXIT.failure };
    }
    const exitCode = error.code === "CANCELED" && error.status === 0 ? EXIT.interrupted : EXIT.failure;
    return { line: `ffedge: ${error.title}: ${oneLine(error.detail)}${codeNote(error)}`, exitCode };
  }
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === "string") return { line: `ffedge: File system error: ${oneLine(message)}`, exitCode: EXIT.failure };
  return { line: `ffedge: Unexpected error: ${oneLine(message)} (FFEDGE_DEBUG=1 shows the stack)`, exitCode: EXIT.failure };
}

/** The service's stable code, for scripts, unless the title already says it ("Unauthorized" is UNAUTHORIZED). */
function codeNote(error: FFedgeError): string {
  if (error.status === 0) return "";
  return error.title.toUpperCase().replace(/[^A-Z0-9]+/g, "_") === error.code ? "" : ` (${error.code})`;
}

/** A task's error carries the tail of ffmpeg's output over several lines: one line, bounded. */
function oneLine(text: string): string {
  const flat = text.replace(/\s*\n\s*/g, " | ").trim();
  return flat.length > 600 ? `${flat.slice(0, 597)}...` : flat;
}
