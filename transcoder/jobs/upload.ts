import type { Timings } from "../config";
import { backoff, retry } from "../lib/retry";
import { CallbackError, type EdgeClient } from "./edge-client";
import { JobFailure } from "./failure";
import { type OutputFile, contentTypeOf } from "./outputs";
import { OUTAGE_RETRY_MAX_DELAY_MS } from "./reporter";

/**
 * PUTs every output to the edge, one after the other; the edge's receipts by file name (the
 * terminal report passes them on). Finished work outlasts an edge outage: each output is retried
 * for as long as the terminal report would be. Throws OUTPUT_UPLOAD_FAILED for an output the
 * edge refused for good or never took.
 */
export async function uploadOutputs(client: EdgeClient, files: readonly OutputFile[], timings: Timings, signal: AbortSignal): Promise<Map<string, string>> {
  const { retryBaseMs, retryMaxDelayMs, terminalGiveUpMs } = timings;
  const receipts = new Map<string, string>();
  const giveUpAt = Date.now() + terminalGiveUpMs;
  for (const file of files) {
    try {
      const receipt = await retry(() => client.putOutput(file.filename, file.path, file.size, contentTypeOf(file.filename), signal), {
        retryable: (error) => !signal.aborted && error instanceof CallbackError && error.retryable,
        delayMs: (attempt) => Math.min(backoff(attempt, retryBaseMs, Math.min(retryMaxDelayMs, OUTAGE_RETRY_MAX_DELAY_MS), false), giveUpAt - Date.now()),
        wake: signal,
      });
      if (receipt) receipts.set(file.filename, receipt);
    } catch (error) {
      signal.throwIfAborted();
      const detail = error instanceof Error ? error.message : String(error);
      throw new JobFailure("OUTPUT_UPLOAD_FAILED", `Output '${file.filename}' could not be stored: ${detail}`);
    }
  }
  return receipts;
}
