import { z } from "zod";

/**
 * The stable error codes of the API. Clients branch on `code`; `detail` is for humans.
 * Adding a code is fine; renaming or reusing one breaks clients.
 */
export const ERROR_STATUS = {
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PAYLOAD_TOO_LARGE: 413,
  /** A body over the platform's request limit, for a file that another upload path takes (problem.alternatives). */
  REQUEST_TOO_LARGE: 413,
  BASE64_TOO_LARGE: 413,
  MISSING_FILE_PART: 400,
  INVALID_MULTIPART: 400,
  INVALID_DATA_URI: 400,
  INVALID_BASE64: 400,
  CONTENT_TYPE_MISMATCH: 400,
  EMPTY_FILE: 400,
  URL_NOT_ALLOWED: 400,
  URL_HOST_BLOCKED: 400,
  URL_UNREACHABLE: 502,
  URL_TIMEOUT: 504,
  URL_REMOTE_STATUS: 502,
  URL_TOO_MANY_REDIRECTS: 502,
  SIGNATURE_INVALID: 403,
  SIGNATURE_EXPIRED: 403,
  SIZE_MISMATCH: 400,
  COMMAND_EMPTY: 400,
  COMMAND_TOO_LONG: 413,
  COMMAND_UNBALANCED_QUOTES: 400,
  COMMAND_SHELL_OPERATOR: 400,
  PROGRAM_NOT_ALLOWED: 400,
  NO_INPUT: 400,
  NO_OUTPUT: 400,
  INPUT_NOT_ALLOWED: 400,
  OUTPUT_NOT_ALLOWED: 400,
  OPTION_NOT_ALLOWED: 400,
  OPTION_MISSING_VALUE: 400,
  OPTION_RESERVED: 400,
  OPTION_VALUE_NOT_ALLOWED: 400,
  FILTER_NOT_ALLOWED: 400,
  FILTER_GRAPH_INVALID: 400,
  LIMIT_EXCEEDED: 400,
  /** A preset that cannot be saved: its parameters, placeholders or command (problem.field / placeholder / policy_code name the part). */
  PRESET_INVALID: 400,
  /** A task's `params` do not fit its preset's parameters (problem.param names the parameter). */
  PRESET_PARAMS_INVALID: 400,
  PRESET_NOT_FOUND: 404,
  PRESET_NAME_TAKEN: 409,
  /** Built-in presets cannot be changed or deleted. */
  PRESET_READ_ONLY: 403,
  PRESET_LIMIT_REACHED: 409,
  STEP_REFERENCE_INVALID: 400,
  TRANSCODER_BUSY: 503,
  TASK_NOT_RUNNABLE: 409,
  TASK_NOT_FINISHED: 409,
  /** A retried task's input is one of our files that has expired or was deleted (problem.input names it). */
  INPUT_EXPIRED: 409,
  WEBHOOK_NOT_CONFIGURED: 409,
  ENDPOINT_LIMIT_REACHED: 409,
  /** A redelivery to a disabled webhook endpoint: nothing is queued. */
  ENDPOINT_DISABLED: 409,
  RATE_LIMITED: 429,
  QUOTA_EXCEEDED: 429,
  INVALID_CREDENTIALS: 401,
  EMAIL_NOT_VERIFIED: 403,
  TOO_MANY_ATTEMPTS: 429,
  CSRF_FAILED: 403,
  INVALID_TOKEN: 400,
  TUS_VERSION_UNSUPPORTED: 412,
  UPLOAD_OFFSET_MISMATCH: 409,
  UPLOAD_LOCKED: 409,
  UPLOAD_INCOMPLETE: 409,
  UPLOAD_INTERRUPTED: 400,
  UPLOAD_GONE: 410,
  INVALID_IDEMPOTENCY_KEY: 400,
  IDEMPOTENCY_KEY_REUSED: 409,
  IDEMPOTENCY_KEY_IN_PROGRESS: 409,
  CONFIG_INVALID: 500,
  UPLOAD_SOURCE_STALLED: 504,
  STORAGE_FULL: 507,
  STORAGE_UNAVAILABLE: 503,
  DESTINATION_NOT_FOUND: 400,
  DESTINATION_NAME_TAKEN: 409,
  DESTINATION_UNREACHABLE: 502,
  DESTINATION_REFUSED: 422,
  DESTINATION_CREDENTIALS: 422,
  /** A retry of a task whose destination was deleted since. */
  DESTINATION_GONE: 409,
  /** Deleting a destination that presets still name. */
  DESTINATION_IN_USE: 409,
  /** A redelivery with no failed delivery whose output is still stored. */
  NOTHING_TO_REDELIVER: 409,
  /** A user's 21st destination. */
  DESTINATION_LIMIT_REACHED: 409,
  /** A delivery attempt at an output whose copy here has expired. */
  OUTPUT_EXPIRED: 410,
  MAIL_NOT_SENT: 503,
  INTERNAL: 500,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Codes a task's `error_code` can carry when it ends `failed`. */
export const TASK_FAILURE_CODES = [
  "FFMPEG_FAILED",
  "INPUT_DOWNLOAD_FAILED",
  "INPUT_FORMAT_NOT_ALLOWED",
  "OUTPUT_MISSING",
  "OUTPUT_LIMIT_EXCEEDED",
  "OUTPUT_UPLOAD_FAILED",
  "WORKSPACE_FULL",
  "TIMEOUT",
  "STALLED",
  "LIMIT_EXCEEDED",
  "DISPATCH_FAILED",
  "TRANSCODER_LOST",
  "COMMAND_REJECTED",
  "CANCELED",
  "INTERNAL",
] as const;
export type TaskFailureCode = (typeof TASK_FAILURE_CODES)[number];

/**
 * Each code's `title`, written out (URL, HTTP, MD5, JSON spelled as such): a new code does not
 * compile until it has one.
 */
export const ERROR_TITLES: Record<ErrorCode, string> = {
  UNAUTHORIZED: "Unauthorized",
  NOT_FOUND: "Not found",
  METHOD_NOT_ALLOWED: "Method not allowed",
  VALIDATION_FAILED: "Validation failed",
  INVALID_JSON: "Invalid JSON",
  UNSUPPORTED_MEDIA_TYPE: "Unsupported media type",
  PAYLOAD_TOO_LARGE: "Payload too large",
  REQUEST_TOO_LARGE: "Request body too large",
  BASE64_TOO_LARGE: "Base64 body too large",
  MISSING_FILE_PART: "Missing file part",
  INVALID_MULTIPART: "Invalid multipart body",
  INVALID_DATA_URI: "Invalid data URI",
  INVALID_BASE64: "Invalid base64",
  CONTENT_TYPE_MISMATCH: "Content-Type mismatch",
  EMPTY_FILE: "Empty file",
  URL_NOT_ALLOWED: "URL not allowed",
  URL_HOST_BLOCKED: "URL host blocked",
  URL_UNREACHABLE: "URL unreachable",
  URL_TIMEOUT: "URL timed out",
  URL_REMOTE_STATUS: "Remote URL answered an error",
  URL_TOO_MANY_REDIRECTS: "Too many redirects",
  SIGNATURE_INVALID: "Invalid signature",
  SIGNATURE_EXPIRED: "Signature expired",
  SIZE_MISMATCH: "Size mismatch",
  COMMAND_EMPTY: "Empty command",
  COMMAND_TOO_LONG: "Command too long",
  COMMAND_UNBALANCED_QUOTES: "Unbalanced quotes in command",
  COMMAND_SHELL_OPERATOR: "Shell operator in command",
  PROGRAM_NOT_ALLOWED: "Program not allowed",
  NO_INPUT: "No input",
  NO_OUTPUT: "No output",
  INPUT_NOT_ALLOWED: "Input not allowed",
  OUTPUT_NOT_ALLOWED: "Output not allowed",
  OPTION_NOT_ALLOWED: "Option not allowed",
  OPTION_MISSING_VALUE: "Option missing its value",
  OPTION_RESERVED: "Option reserved by the service",
  OPTION_VALUE_NOT_ALLOWED: "Option value not allowed",
  FILTER_NOT_ALLOWED: "Filter not allowed",
  FILTER_GRAPH_INVALID: "Invalid filter graph",
  LIMIT_EXCEEDED: "Limit exceeded",
  PRESET_INVALID: "Invalid preset",
  PRESET_PARAMS_INVALID: "Invalid preset parameters",
  PRESET_NOT_FOUND: "Preset not found",
  PRESET_NAME_TAKEN: "Preset name taken",
  PRESET_READ_ONLY: "Preset is read-only",
  PRESET_LIMIT_REACHED: "Preset limit reached",
  STEP_REFERENCE_INVALID: "Step reference invalid",
  TRANSCODER_BUSY: "Transcoder busy",
  TASK_NOT_RUNNABLE: "Task not runnable",
  TASK_NOT_FINISHED: "Task not finished",
  INPUT_EXPIRED: "Input expired",
  WEBHOOK_NOT_CONFIGURED: "Webhook not configured",
  ENDPOINT_LIMIT_REACHED: "Webhook endpoint limit reached",
  ENDPOINT_DISABLED: "Webhook endpoint disabled",
  RATE_LIMITED: "Rate limited",
  QUOTA_EXCEEDED: "Quota exceeded",
  INVALID_CREDENTIALS: "Invalid credentials",
  EMAIL_NOT_VERIFIED: "Email not verified",
  TOO_MANY_ATTEMPTS: "Too many attempts",
  CSRF_FAILED: "CSRF check failed",
  INVALID_TOKEN: "Invalid token",
  TUS_VERSION_UNSUPPORTED: "Unsupported tus version",
  UPLOAD_OFFSET_MISMATCH: "Upload offset mismatch",
  UPLOAD_LOCKED: "Upload locked",
  UPLOAD_INCOMPLETE: "Upload incomplete",
  UPLOAD_INTERRUPTED: "Upload interrupted",
  UPLOAD_GONE: "Upload gone",
  INVALID_IDEMPOTENCY_KEY: "Invalid idempotency key",
  IDEMPOTENCY_KEY_REUSED: "Idempotency key reused",
  IDEMPOTENCY_KEY_IN_PROGRESS: "Idempotency key in progress",
  CONFIG_INVALID: "Invalid configuration",
  UPLOAD_SOURCE_STALLED: "Upload source stalled",
  STORAGE_FULL: "Storage full",
  STORAGE_UNAVAILABLE: "Storage unavailable",
  DESTINATION_NOT_FOUND: "Destination not found",
  DESTINATION_NAME_TAKEN: "Destination name taken",
  DESTINATION_UNREACHABLE: "Destination unreachable",
  DESTINATION_REFUSED: "Destination refused the request",
  DESTINATION_CREDENTIALS: "Destination credentials not accepted",
  DESTINATION_GONE: "Destination deleted",
  DESTINATION_IN_USE: "Destination in use",
  NOTHING_TO_REDELIVER: "Nothing to redeliver",
  DESTINATION_LIMIT_REACHED: "Destination limit reached",
  OUTPUT_EXPIRED: "Output expired",
  MAIL_NOT_SENT: "Mail not sent",
  INTERNAL: "Internal error",
};

/** The one error type of the service: thrown anywhere, turned into problem details in one place. */
export class AppError extends Error {
  readonly status: number;
  /** Response headers that belong with this error (Retry-After, Allow, ...). */
  headers: Record<string, string> = {};
  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = "AppError";
    this.status = ERROR_STATUS[code];
  }

  withHeaders(headers: Record<string, string>): this {
    this.headers = { ...this.headers, ...headers };
    return this;
  }
}

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    // Members some codes add to name what is at fault; a client may read them, none is always there.
    issues: z.array(z.object({ path: z.array(z.union([z.string(), z.number()])), message: z.string() })).optional().meta({ description: "VALIDATION_FAILED: each problem with the body, `path` naming the member (e.g. [\"steps\", 1])" }),
    pointer: z.string().optional().meta({ example: "/tasks/1", description: "POST /v1/tasks/batch: the refused item, as a JSON pointer into the request" }),
    token: z.string().optional().meta({ example: "-filter_complex", description: "A refused command: the word (option, filter, file name) at fault" }),
    step: z.number().int().optional().meta({ example: 1, description: "A refused chain of steps: the step at fault, counted from 0" }),
    param: z.string().optional().meta({ example: "width", description: "PRESET_PARAMS_INVALID: the parameter at fault" }),
    preset: z.string().optional().meta({ example: "web-720p", description: "PRESET_NOT_FOUND, PRESET_READ_ONLY, PRESET_PARAMS_INVALID: the preset named" }),
    destination: z.string().optional().meta({ example: "archive", description: "DESTINATION_NOT_FOUND and DESTINATION_GONE: the destination named; a destination's test (DESTINATION_CREDENTIALS, _REFUSED, _UNREACHABLE): its id" }),
    name: z.string().optional().meta({ example: "archive", description: "PRESET_NAME_TAKEN, DESTINATION_NAME_TAKEN: the name already in use" }),
    s3_code: z.string().optional().meta({ example: "NoSuchBucket", description: "DESTINATION_REFUSED, DESTINATION_CREDENTIALS: the S3 server's error code" }),
    expired: z.array(z.string()).optional().meta({ example: ["out.mp4"], description: "NOTHING_TO_REDELIVER: the outputs whose delivery failed but whose copy here has expired" }),
    input: z.string().optional().meta({ example: "https://api.example.com/uploads/usr_3k9x/f1c2b3a4d5e6f708.mp4", description: "INPUT_EXPIRED: the input of the retried task that is gone" }),
    endpoint_id: z.string().optional().meta({ example: "whe_5c1f0e9a2b3d4c5e6f708192", description: "ENDPOINT_DISABLED: the webhook endpoint" }),
    retry_after: z.number().int().optional().meta({ example: 30, description: "RATE_LIMITED, QUOTA_EXCEEDED: seconds to wait (also the Retry-After header)" }),
  })
  .passthrough()
  .meta({
    id: "Problem",
    description: "RFC 9457 problem details",
    example: { type: "https://ffedge.dev/problems/step-reference-invalid", title: "Step reference invalid", status: 400, detail: "step 1: '{{steps.0.outputs.nope.mp4}}': step 0 has no output file 'nope.mp4'; its single-file outputs are 'clip.mp4'.", code: "STEP_REFERENCE_INVALID", token: "{{steps.0.outputs.nope.mp4}}", step: 1 },
  });

/** RFC 9457 problem details for an AppError. */
export function problemBody(error: AppError): Record<string, unknown> {
  return {
    type: `https://ffedge.dev/problems/${error.code.toLowerCase().replaceAll("_", "-")}`,
    title: ERROR_TITLES[error.code],
    status: error.status,
    detail: error.detail,
    code: error.code,
    ...error.extra,
  };
}
