import { AppError } from "../../shared/errors";
import type { UploadRecord } from "../../shared/schemas/files";
import { purgeCached } from "../files/cdn-cache";
import { essence } from "../files/content-type";
import { ingestUpload } from "../files/ingest";
import { config } from "../lib/config";
import { signToken, verifyToken } from "../lib/signed-token";
import { UNFINISHED_TASK_OF_USER, deleteTaskOutputRows } from "./repository";
import { fail, type LiveState } from "./state";

/** Names the transcoder may store: plain files, as the command policy allows (sequences already expanded). */
const OUTPUT_FILENAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

/** Where a task's output lives in R2 (and so on the CDN): `outputs/<user_id>/<task_id>/<filename>`. */
export function outputKey(userId: string, taskId: string, filename: string): string {
  return `outputs/${userId}/${taskId}/${filename}`;
}

/** ffmpeg's stderr of a task: not under a CDN-served prefix, read only through the API. */
export function logKey(userId: string, taskId: string): string {
  return `logs/${userId}/${taskId}.log`;
}

/** One output file as the transcoder PUTs it. */
export interface IncomingOutput {
  userId: string;
  taskId: string;
  filename: string;
  length: number;
  contentType: string | undefined;
  body: ReadableStream<Uint8Array> | null;
}

/**
 * The one way a transcoder stores an output: its PUT streams through the Worker into R2 (never
 * buffered: a Worker has 128 MB of memory), sized by Content-Length, capped at MAX_UPLOAD_BYTES,
 * and recorded only while the task runs (files/records.ts insertOutputFile). Not a presigned R2
 * URL: those need R2 S3 credentials that local development and the tests do not have, and a
 * container has no internet of its own — its outbound calls reach this Worker's outbound handler,
 * which is not an incoming request on the zone and so not under the front door's 100 MB
 * request-body limit (https://developers.cloudflare.com/containers/platform-details/outbound-traffic/,
 * https://developers.cloudflare.com/workers/platform/limits/#request-limits).
 * Answers with the edge's receipt for exactly that object and size.
 */
export async function storeOutput(env: Env, output: IncomingOutput): Promise<UploadRecord & { receipt: string }> {
  const { userId, taskId, filename, length } = output;
  checkOutput(env, filename, length);
  if (!output.body) throw new AppError("EMPTY_FILE", "The output body is empty.");
  const declaredType = essence(output.contentType ?? "") || "application/octet-stream";
  const record = await ingestUpload(env, userId, { body: output.body, length, declaredType, filename, key: outputKey(userId, taskId, filename), task: { id: taskId, whileUnfinished: UNFINISHED_TASK_OF_USER } });
  return { ...record, receipt: await receiptFor(env, record.key, record.size) };
}

/** A name the transcoder may store and a size within the upload limit. */
function checkOutput(env: Env, filename: string, size: number): void {
  if (!OUTPUT_FILENAME.test(filename) || filename.includes("..")) throw new AppError("OUTPUT_NOT_ALLOWED", `'${filename}' is not an allowed output name.`);
  const limit = config(env).maxUploadBytes;
  if (size > limit) throw new AppError("PAYLOAD_TOO_LARGE", `Output '${filename}' is ${size} bytes; the limit is ${limit}.`);
}

/** Purpose of the edge's signed word that it stored an output (key and size) in R2 itself. */
const RECEIPT = "stored";
const RECEIPT_TTL_SECONDS = 24 * 3600;
type Receipt = { k: string; s: number };

function receiptFor(env: Env, key: string, size: number): Promise<string> {
  return signToken(env.SIGNING_SECRET, RECEIPT, { k: key, s: size } satisfies Receipt, RECEIPT_TTL_SECONDS);
}

/**
 * Whether every reported output comes with the edge's receipt for exactly that object and size:
 * then the task's object need not `head` each one in R2 to trust the report (one R2 operation
 * per output saved). Without them it looks each one up (verifyStoredOutputs).
 */
export async function allReceipted(env: Env, userId: string, taskId: string, outputs: readonly { filename: string; size: number; receipt?: string }[]): Promise<boolean> {
  for (const output of outputs) {
    if (!output.receipt) return false;
    // A receipt that does not verify is no receipt: the task's object checks the outputs in R2 instead.
    const receipt = await verifyToken<Receipt>(env.SIGNING_SECRET, RECEIPT, output.receipt).catch(() => undefined);
    if (receipt?.k !== outputKey(userId, taskId, output.filename) || receipt.s !== output.size) return false;
  }
  return true;
}

/** Outputs count only once they are really in R2 with the size the transcoder reported. */
export async function verifyStoredOutputs(files: R2Bucket, state: LiveState): Promise<LiveState> {
  for (const output of state.outputs ?? []) {
    const head = await files.head(outputKey(state.user_id, state.task_id, output.filename));
    if (!head || head.size !== output.size) {
      return fail({ ...state, progress: 99, outputs: null }, "OUTPUT_UPLOAD_FAILED", `Output '${output.filename}' was reported but is not stored.`, state.finished_at!);
    }
  }
  return state;
}

/**
 * Deletes everything a task stored under its outputs (with `withLog`, its log too): the R2
 * objects, their cached copies and their file rows, so nothing of it is listed, served or
 * counted. Objects first: a row without its object is harmless, an object without a row would
 * be swept by nothing. An output still on its way in is refused its row once the task has ended
 * (files/records.ts insertOutputFile) and deletes its own object.
 */
export async function discardTaskFiles(env: Env, userId: string, taskId: string, withLog = false): Promise<void> {
  const keys = withLog ? [logKey(userId, taskId)] : [];
  let cursor: string | undefined;
  do {
    const page = await env.FILES.list({ prefix: outputKey(userId, taskId, ""), cursor });
    keys.push(...page.objects.map((object) => object.key));
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  if (keys.length > 0) {
    await env.FILES.delete(keys);
    await purgeCached(env, keys);
  }
  await deleteTaskOutputRows(env.DB, userId, taskId);
}
