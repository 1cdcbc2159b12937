import { createReadStream } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { z } from "zod";
import { EventAckSchema, StoredOutputSchema, type JobEvent, type TranscodeJob } from "../../shared/schemas/jobs";

export type EventAck = z.infer<typeof EventAckSchema>;

/** A callback that did not succeed. `retryable` is false when the edge refused it for good. */
export class CallbackError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
    this.name = "CallbackError";
  }
}

/**
 * The job's calls back to the edge: reports (the terminal one carries ffmpeg's log) and its
 * outputs' uploads. The URLs come from the edge (authenticated by
 * TRANSCODER_SECRET), not from the user, so they are not put through the input fetcher's policy.
 */
export class EdgeClient {
  private readonly base: string;
  private readonly token: string;

  constructor(
    job: Pick<TranscodeJob, "callback_url" | "callback_token">,
    private readonly timeoutMs = 15_000,
  ) {
    this.base = job.callback_url.replace(/\/+$/, "");
    this.token = job.callback_token;
  }

  async postEvent(event: JobEvent): Promise<EventAck> {
    return EventAckSchema.parse(await this.postJson("events", event));
  }

  /**
   * PUTs one output to `{callback_url}/outputs/<filename>`, streamed from disk with an exact
   * Content-Length (the edge stores it in R2 as it arrives). Resolves with the edge's receipt.
   */
  putOutput(filename: string, file: string, size: number, contentType: string, signal?: AbortSignal): Promise<StoredReceipt> {
    const url = new URL(`${this.base}/outputs/${encodeURIComponent(filename)}`);
    const client = url.protocol === "https:" ? https : http;
    const timeout = AbortSignal.timeout(Math.ceil(Math.max(this.timeoutMs, 60_000 + size / 1024)));
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const headers = { authorization: `Bearer ${this.token}`, "content-type": contentType, "content-length": String(size) };
    return new Promise((resolve, reject) => {
      const request = client.request(url, { method: "PUT", signal: combined, headers }, (response) => {
        const status = response.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let length = 0;
        response.on("data", (chunk: Buffer) => {
          // Only the edge's short JSON answer is kept; anything longer is not a receipt.
          length += chunk.length;
          if (length <= MAX_ANSWER_BYTES) chunks.push(chunk);
        });
        response.on("end", () => {
          if (status >= 200 && status < 300) resolve(receiptIn(length <= MAX_ANSWER_BYTES ? Buffer.concat(chunks).toString("utf8") : ""));
          else reject(new CallbackError(`The upload was answered ${status}.`, isRetryable(status), status));
        });
        response.on("error", (error) => reject(new CallbackError(`The upload failed: ${error.message}.`, true)));
      });
      request.on("error", (error) => reject(new CallbackError(`The upload failed: ${error.message}.`, true)));
      const body = createReadStream(file);
      body.on("error", (error) => request.destroy(error));
      body.pipe(request);
    });
  }

  private async postJson(path: string, body: unknown): Promise<unknown> {
    const timeout = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    try {
      response = await fetch(`${this.base}/${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${this.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: timeout,
        redirect: "error",
      });
    } catch (error) {
      throw new CallbackError(`${path} could not be reached: ${error instanceof Error ? error.message : String(error)}.`, true);
    }
    // The status decides; the body only adds detail to the error.
    const text = await response.text().catch(() => "");
    if (!response.ok) throw new CallbackError(`${path} answered ${response.status}: ${text.slice(0, 300)}`, isRetryable(response.status), response.status);
    try {
      return JSON.parse(text);
    } catch {
      throw new CallbackError(`${path} answered ${response.status} with a body that is not JSON.`, true, response.status);
    }
  }
}

/** The edge's signed word that it stored an output (absent from an answer that is not the edge's; the edge then looks the output up itself). */
export type StoredReceipt = string | undefined;
const MAX_ANSWER_BYTES = 16 * 1024;

function receiptIn(answer: string): StoredReceipt {
  try {
    return StoredOutputSchema.safeParse(JSON.parse(answer)).data?.receipt;
  } catch {
    return undefined; // not JSON: no receipt, and the edge checks the output in R2 instead
  }
}

/** Server errors, rate limits and timeouts may pass; any other 4xx will be refused again. */
function isRetryable(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}
