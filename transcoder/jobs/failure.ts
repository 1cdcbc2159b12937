import type { TaskFailureCode } from "../../shared/errors";

/** Why a job ended `failed`: becomes the terminal report's `error_code` and `error`. */
export class JobFailure extends Error {
  constructor(
    readonly code: TaskFailureCode,
    message: string,
  ) {
    super(message);
    this.name = "JobFailure";
  }
}

/** The transcoder's work directory is full: the host's fault, not the command's. */
export function workspaceFull(what: string): JobFailure {
  return new JobFailure("WORKSPACE_FULL", `${what}: no space left in the transcoder's work directory.`);
}

/** ffmpeg prints the system's words for ENOSPC and EDQUOT when a write fails; it has no code of its own for them. */
export function ranOutOfSpace(stderr: string): boolean {
  return /No space left on device|Disk quota exceeded/.test(stderr);
}
