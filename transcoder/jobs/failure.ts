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
