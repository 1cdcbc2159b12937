import { deliveredOnly, deliveryFailure, outputAtDestination, settleDeliveries } from "./deliveries.js";
import { destinationsResource } from "./destinations.js";
import { endpointsResource } from "./endpoints.js";
import { FFedgeError } from "./errors.js";
import { taskEvents, type TaskEventMessage, waitForTask, type WaitOptions } from "./events.js";
import { type HttpOptions, canceled, request, requestJson } from "./http.js";
import { node } from "./local.js";
import { presetsResource, queryString } from "./presets.js";
import { commandWithUploads, sourceWithUploads, type Upload, type Uploader, uploadOnce } from "./sources.js";
import type {
  CreatedTask, FileList, Me, NewTask, Redelivery, RetriedTask, RunProgress, Task, TaskBatchResult, TaskDestination, TaskList, TaskOutput, TaskSource, TaskStatus, UploadLimits,
  UploadRecord, ValidatedCommand, WebhookSecret,
} from "./types.js";
import { DEFAULT_TUNING, source, type UploadContext, type UploadOptions, type UploadTuning, uploadBlob } from "./uploads.js";

export interface FFedgeOptions {
  /** Defaults to the FFEDGE_API_KEY environment variable where there is one. */
  apiKey?: string;
  /** Defaults to FFEDGE_URL, then http://localhost:8787. */
  baseUrl?: string;
  fetch?: typeof fetch;
  /** Retries of an idempotent request after a 429, a 5xx or a network error (default 2). */
  maxRetries?: number;
  /** Upload thresholds; the defaults follow docs/uploads.md. */
  uploads?: Partial<UploadTuning>;
}

export interface CreateTaskOptions {
  with_metadata?: boolean;
  webhook?: string;
  timeout_seconds?: number;
  destination?: TaskDestination;
  /** Defaults to a fresh one, so a retried submit never makes a second task. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface RunOptions {
  onProgress?: (progress: RunProgress) => void;
  signal?: AbortSignal;
  /** The folder relative input paths are read from (default: the process's). */
  cwd?: string;
  webhook?: string;
  timeoutSeconds?: number;
  withMetadata?: boolean;
  /** Deliver the outputs to one of your destinations as well (`copy`) or instead (`only`). */
  destination?: TaskDestination;
  /** false: resolve with the task as soon as it is submitted (uploads done), without following it. */
  wait?: boolean;
  /**
   * With a destination (the task's own or its preset's), run() waits after `completed` until no
   * output's delivery is `pending`, then rejects with DELIVERY_FAILED if one failed. false: resolve
   * at `completed`, deliveries possibly still pending.
   */
  waitForDeliveries?: boolean;
}

export interface PrepareOptions {
  onProgress?: (progress: RunProgress) => void;
  signal?: AbortSignal;
  cwd?: string;
}

/** A command whose local inputs are uploaded: `command` names their URLs instead. */
export interface PreparedCommand {
  command: string;
  uploads: Upload[];
}

/** A task whose local files are uploaded: a command's or each step's inputs, a preset's file parameters. */
export interface PreparedTask<T extends TaskSource = NewTask> {
  task: T;
  uploads: Upload[];
}

type Signal = { signal?: AbortSignal };

/**
 * The ffedge API: tasks, files, account, and `run()` which uploads a command's local inputs,
 * submits it and follows it to the end.
 *
 * @example
 * const ff = new FFedge({ apiKey: process.env.FFEDGE_API_KEY });
 * const task = await ff.run("ffmpeg -i ./in.mp4 -vf scale=640:-2 out.mp4", { onProgress: console.log });
 * await ff.download(task.outputs![0]!, ".");
 */
export class FFedge {
  readonly baseUrl: string;
  private readonly http: HttpOptions;
  private readonly tuning: UploadTuning;
  private limitsPromise: Promise<UploadLimits> | undefined;

  constructor(options: FFedgeOptions = {}) {
    const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
    this.baseUrl = (options.baseUrl ?? env.FFEDGE_URL ?? "http://localhost:8787").replace(/\/+$/, "");
    const fetcher = options.fetch ?? globalThis.fetch;
    this.http = { baseUrl: this.baseUrl, apiKey: options.apiKey ?? env.FFEDGE_API_KEY, fetch: (input, init) => fetcher(input, init), maxRetries: options.maxRetries ?? 2 };
    this.tuning = { ...DEFAULT_TUNING, ...options.uploads };
    this.presets = presetsResource(this.http);
    this.destinations = destinationsResource(this.http);
    this.webhookEndpoints = endpointsResource(this.http);
  }

  readonly tasks = {
    /** Submits a command (as a string), or a task: `{ command }`, `{ preset, params }` or `{ steps }`, with an optional `destination`. */
    create: (task: string | NewTask, options: CreateTaskOptions = {}): Promise<CreatedTask> => {
      const { idempotencyKey, signal, ...rest } = options;
      const body = typeof task === "string" ? { command: task, ...rest } : { ...task, ...rest };
      return requestJson(this.http, "/v1/tasks", { json: body, headers: { "idempotency-key": idempotencyKey ?? crypto.randomUUID() }, signal });
    },
    /** Runs a finished task again as a new task (its inputs must still exist: INPUT_EXPIRED otherwise). */
    retry: (id: string, options: Signal & { idempotencyKey?: string } = {}): Promise<RetriedTask> =>
      requestJson(this.http, `/v1/tasks/${encodeURIComponent(id)}/retry`, { method: "POST", headers: { "idempotency-key": options.idempotencyKey ?? crypto.randomUUID() }, signal: options.signal }),
    /** Delivers again the outputs whose delivery to the task's destination failed (fix the destination first). */
    retryDeliveries: (id: string, options: Signal = {}): Promise<Redelivery> =>
      requestJson(this.http, `/v1/tasks/${encodeURIComponent(id)}/deliveries/retry`, { method: "POST", ...options }),
    /**
     * Submits up to 100 tasks at once. Resolves with one result per item, in order: the created
     * task, or `{ index, error }` with the problem that refused that item (the others still run).
     */
    batch: (items: ReadonlyArray<string | NewTask>, options: Signal & { idempotencyKey?: string } = {}): Promise<TaskBatchResult> =>
      requestJson(this.http, "/v1/tasks/batch", {
        json: { tasks: items.map((item) => (typeof item === "string" ? { command: item } : item)) },
        headers: { "idempotency-key": options.idempotencyKey ?? crypto.randomUUID() },
        signal: options.signal,
      }),
    get: (id: string, options: Signal = {}): Promise<Task> => requestJson(this.http, `/v1/tasks/${encodeURIComponent(id)}`, options),
    list: (query: { status?: TaskStatus; limit?: number; offset?: number } & Signal = {}): Promise<TaskList> => {
      const { signal, ...params } = query;
      return requestJson(this.http, `/v1/tasks${queryString(params)}`, { signal });
    },
    cancel: (id: string, options: Signal = {}): Promise<Task> => requestJson(this.http, `/v1/tasks/${encodeURIComponent(id)}/cancel`, { method: "POST", idempotent: true, ...options }),
    delete: async (id: string, options: Signal = {}): Promise<void> => {
      await request(this.http, `/v1/tasks/${encodeURIComponent(id)}`, { method: "DELETE", ...options });
    },
    logs: async (id: string, options: Signal = {}): Promise<string> => (await request(this.http, `/v1/tasks/${encodeURIComponent(id)}/logs`, options)).text(),
    /** Server-Sent Events of one task, ending after `completed` or `failed`; reconnects after a drop. */
    events: (id: string, options: Signal = {}): AsyncIterable<TaskEventMessage> => taskEvents(this.http, id, options.signal),
    /** Resolves with the ended task, completed or failed (run() is the one that rejects on failure). */
    wait: (id: string, options: WaitOptions = {}): Promise<Task> => waitForTask(this.http, id, options),
    /** Checks a command against the policy without running it; a refused one rejects with the policy's code. */
    validate: (command: string, options: Signal = {}): Promise<ValidatedCommand> => requestJson(this.http, "/v1/tasks/validate", { json: { command }, idempotent: true, ...options }),
  };

  readonly files = {
    /** Uploads a local path (Node, Deno, Bun) or a Blob by the path that suits its size: multipart, presigned PUT or tus. */
    upload: async (input: string | Blob, options: UploadOptions = {}): Promise<UploadRecord> => uploadBlob(this.uploadContext(), await source(input, options), options),
    list: (query: { limit?: number; offset?: number } & Signal = {}): Promise<FileList> => {
      const { signal, ...params } = query;
      return requestJson(this.http, `/api/files${queryString(params)}`, { signal });
    },
    delete: async (key: string, options: Signal = {}): Promise<void> => {
      await request(this.http, `/api/files/${encodeURIComponent(key)}`, { method: "DELETE", ...options });
    },
  };

  /** Saved command templates with typed parameters (`POST /v1/tasks` with `preset` runs one). */
  readonly presets: ReturnType<typeof presetsResource>;
  /** S3-compatible buckets that task outputs are delivered to. */
  readonly destinations: ReturnType<typeof destinationsResource>;
  /** URLs subscribed to task and file events, each with its own signing secret (verify with `verifyWebhook`). */
  readonly webhookEndpoints: ReturnType<typeof endpointsResource>;

  readonly webhookSecret = {
    /** A new signing secret (shown only now); the previous one keeps signing for a while. */
    rotate: (options: Signal = {}): Promise<WebhookSecret> => requestJson(this.http, "/v1/webhook-secret/rotate", { method: "POST", ...options }),
  };

  me(options: Signal = {}): Promise<Me> {
    return requestJson(this.http, "/v1/me", options);
  }

  /**
   * Uploads the task's local files, submits it with an Idempotency-Key and follows it. The task is
   * a command, or `{ preset, params }` (a parameter naming a local file is uploaded and replaced by
   * its URL), or `{ steps }` (each step's local inputs uploaded).
   * Resolves with the completed task; rejects with FFedgeError carrying the task's `error_code`
   * when it fails, the policy's code when it is refused, `CANCELED` after `signal` aborts (the
   * task is canceled on the service first). With `wait: false` it resolves with the task as soon
   * as it is submitted.
   *
   * @example
   * const task = await ff.run({ preset: "thumbnail", params: { video: "./in.mp4", width: 320 } });
   */
  async run(what: string | NewTask, options: RunOptions = {}): Promise<Task> {
    const { signal, onProgress } = options;
    const { task: submitted, uploads } = await this.prepareTask(typeof what === "string" ? { command: what } : what, options);
    let created: CreatedTask;
    try {
      created = await this.tasks.create(submitted, {
        signal,
        ...defined({ webhook: options.webhook, timeout_seconds: options.timeoutSeconds, with_metadata: options.withMetadata, destination: options.destination }),
      });
    } catch (error) {
      // A refused task leaves nothing behind: the files this run uploaded for it are deleted (best effort).
      if (error instanceof FFedgeError && error.status >= 400 && error.status < 500) await this.removeUploads(uploads);
      throw error;
    }
    onProgress?.({ phase: "submitted", task_id: created.task_id });
    if (options.wait === false) return this.tasks.get(created.task_id);
    let task: Task;
    try {
      task = await this.tasks.wait(created.task_id, {
        signal,
        onProgress: (event) => onProgress?.({ phase: "task", task_id: created.task_id, status: event.status, progress: event.progress, ...(event.eta_seconds === undefined ? {} : { eta_seconds: event.eta_seconds }) }),
      });
    } catch (error) {
      if (signal?.aborted) {
        await this.tasks.cancel(created.task_id).catch(() => {});
        throw canceled(signal);
      }
      throw error;
    }
    if (task.status === "failed") {
      throw new FFedgeError({ type: "about:blank", status: 0, code: task.error_code ?? "INTERNAL", title: "Task failed", detail: task.error ?? `Task ${task.task_id} failed.`, task });
    }
    if (options.waitForDeliveries === false || !task.outputs?.some((output) => output.destination)) return task;
    const settled = await settleDeliveries(task, () => this.tasks.get(created.task_id, { signal }), (pending, total) => onProgress?.({ phase: "delivery", task_id: created.task_id, pending, total }), signal);
    const failed = deliveryFailure(settled);
    if (failed) throw failed;
    return settled;
  }

  /**
   * Uploads the command's local inputs (Node, Deno, Bun) and returns it rewritten to their URLs,
   * everything else as written. `run()` does this first; call it alone to submit later.
   */
  async prepare(command: string, options: PrepareOptions = {}): Promise<PreparedCommand> {
    const { value, uploads } = await this.uploading(options, (upload) => commandWithUploads(command, options.cwd, upload));
    return { command: value, uploads };
  }

  /** As `prepare()`, for a task: a command's or each step's local inputs, and a preset's parameters that name local files. */
  async prepareTask<T extends TaskSource>(task: T, options: PrepareOptions = {}): Promise<PreparedTask<T>> {
    const { value, uploads } = await this.uploading(options, (upload) => sourceWithUploads(task, options.cwd, upload));
    return { task: value, uploads };
  }

  /** Runs `work` with an uploader; if it fails part-way, the files it had uploaded are deleted again (best effort) before the error goes on. */
  private async uploading<T>({ signal, onProgress }: PrepareOptions, work: (upload: Uploader) => Promise<T>): Promise<{ value: T; uploads: Upload[] }> {
    const { upload, uploads, settled } = uploadOnce((path, file) => this.files.upload(path, { signal, onProgress: (p) => onProgress?.({ phase: "upload", file, ...p }) }));
    try {
      return { value: await work(upload), uploads };
    } catch (error) {
      await settled();
      await this.removeUploads(uploads);
      throw error;
    }
  }

  private async removeUploads(uploads: Upload[]): Promise<void> {
    // Best effort: the refusal or failure the caller is about to see matters more than a leftover file, which expires anyway.
    await Promise.all(uploads.map((upload) => this.files.delete(upload.record.key).catch(() => {})));
  }

  /**
   * Streams an output to `dir`/its file name (Node, Deno, Bun) and returns the path; refuses a
   * name that is not a plain file name. An existing file is replaced unless `overwrite: false`.
   * An output delivered `only` to a destination is read from its bucket URL without the API key;
   * when the bucket does not serve it (or its copy here is gone), OUTPUT_AT_DESTINATION.
   */
  async download(output: Pick<TaskOutput, "url" | "filename" | "destination">, dir: string, options: Signal & { overwrite?: boolean } = {}): Promise<string> {
    const name = output.filename;
    if (!name || /[\\/]/.test(name) || name === "." || name === ".." || name.includes("\0")) {
      throw FFedgeError.local("UNSAFE_FILENAME", "Unsafe file name", `The output name ${JSON.stringify(name)} is not a plain file name.`);
    }
    const fs = await node();
    const target = fs.join(dir, name);
    const auth = !deliveredOnly(output) && new URL(output.url).origin === new URL(this.baseUrl).origin;
    const response = await request(this.http, output.url, { absolute: true, auth, signal: options.signal }).catch((error: unknown) => {
      const moved = deliveredOnly(output) || output.destination?.status === "pending";
      if (moved && error instanceof FFedgeError && error.status >= 400 && error.status < 500) throw outputAtDestination(output, error);
      throw error;
    });
    if (!response.body) throw FFedgeError.local("INVALID_RESPONSE", "Empty download", `${output.url} sent no body.`);
    try {
      await fs.writeStream(target, response.body, options.overwrite ?? true);
    } catch (error) {
      if (options.signal?.aborted) throw canceled(options.signal);
      const code = (error as { code?: string }).code === "EEXIST" ? "FILE_EXISTS" : "FILE_UNWRITABLE";
      throw FFedgeError.local(code, "Cannot write the file", `${target}: ${(error as Error).message}`, error);
    }
    return target;
  }

  private uploadContext(): UploadContext {
    return { http: this.http, tuning: this.tuning, limits: () => (this.limitsPromise ??= this.me().then((me) => me.limits, (error) => ((this.limitsPromise = undefined), Promise.reject(error)))) };
  }
}

function defined<T extends Record<string, unknown>>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as Partial<T>;
}
