import { Hono } from "hono";
import { bearerToken } from "../../shared/bearer";
import { CONTAINER_EDGE_HOST } from "../../shared/egress";
import { AppError } from "../../shared/errors";
import { JOB_LOG_MAX_BYTES, type JobEvent, JobEventSchema, OutputUploadRequestSchema } from "../../shared/schemas/jobs";
import { essence } from "../files/content-type";
import { ingestUpload } from "../files/ingest";
import { presignR2Put } from "../files/presign";
import { expiryFrom, insertOutputFile } from "../files/records";
import { config } from "../lib/config";
import { signToken, verifyToken } from "../lib/signed-token";
import { liveState } from "../tasks/live-state";
import { discardTaskFiles, logKey, outputKey } from "../tasks/outputs";
import { findTaskById } from "../tasks/repository";
import { taskStub } from "../lib/stubs";

const OUTPUT_URL_TTL_SECONDS = 30 * 60;
/** Names the transcoder may store: plain files, as the command policy allows (sequences already expanded). */
const OUTPUT_FILENAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

type Grant = { k: string; u: string; t: string; s: number; ct: string };

/**
 * Callbacks from transcoders, authenticated by the per-task token the edge put in the job.
 * A token for one task cannot report on or store files for another.
 */
export const internal = new Hono<{ Bindings: Env; Variables: { taskId: string; run: number; userId: string | undefined } }>();

internal.use("/internal/tasks/:task_id/*", async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token) throw new AppError("UNAUTHORIZED", "A task callback token is required.");
  // `u`, the task's owner, spares the callbacks a D1 read (edge/dispatch/job.ts).
  const grant = await verifyToken<{ t: string; r?: number; u?: string }>(c.env.SIGNING_SECRET, "callback", token).catch(() => {
    throw new AppError("UNAUTHORIZED", "The task callback token is not valid.");
  });
  if (grant.t !== c.req.param("task_id")) throw new AppError("UNAUTHORIZED", "The task callback token is for another task.");
  c.set("taskId", grant.t);
  c.set("run", grant.r ?? 0);
  c.set("userId", grant.u);
  await next();
});

/** The task's owner: from the token, or from D1 for a token signed before owners went into it. */
async function ownerOf(env: Env, taskId: string, fromToken: string | undefined): Promise<string> {
  if (fromToken) return fromToken;
  const task = await findTaskById(env.DB, taskId);
  if (!task) throw new AppError("NOT_FOUND", "No such task.");
  return task.user_id;
}

internal.post("/internal/tasks/:task_id/events", async (c) => {
  // A body that is not JSON fails validation on the next line.
  const parsed = JobEventSchema.safeParse(await c.req.json().catch(() => undefined));
  if (!parsed.success) throw new AppError("VALIDATION_FAILED", `Invalid report: ${parsed.error.issues.map((issue) => issue.message).join("; ")}.`);
  const taskId = c.get("taskId");
  let owner: Promise<string> | undefined;
  const userId = () => (owner ??= ownerOf(c.env, taskId, c.get("userId")));
  let event: JobEvent = parsed.data;
  if ((event.type === "completed" || event.type === "failed") && event.log !== undefined) {
    // Stored before the end is recorded, so the log is there as soon as the task shows as ended;
    // the task's object keeps the report without it.
    await storeLog(c.env, await userId(), taskId, event.log);
    event = { ...event, log: undefined };
  }
  let outputsStored = false;
  if (event.type === "completed") {
    outputsStored = await allReceipted(c.env, await userId(), taskId, event.outputs);
    event = { ...event, outputs: event.outputs.map(({ receipt: _receipt, ...output }) => output) };
  }
  const answer = await taskStub(c.env, taskId).report(event, c.get("run"), outputsStored);
  if (event.type !== "started" && event.type !== "progress" && answer.cancel) {
    // A task deleted before owners went into tokens has no owner left to find: it stored nothing either.
    const owner = await userId().catch(() => undefined);
    if (owner) await discardLateFiles(c.env, taskId, owner, answer.ok);
  }
  return c.json(answer);
});

/**
 * A run's last report comes after all its uploads. When it finds its task ended without
 * completing, or deleted, whatever the run stored since is deleted: an output that reached R2
 * through its presigned URL after the end (no row refuses those), and for a deleted task the
 * log this report just stored. Nothing else would ever delete them.
 */
async function discardLateFiles(env: Env, taskId: string, userId: string, taskExists: boolean): Promise<void> {
  if (!taskExists) return discardTaskFiles(env, userId, taskId, true);
  const state = await liveState(env, taskId);
  if (state?.status === "failed") await discardTaskFiles(env, userId, taskId);
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
 * then the task's object need not `head` each one in R2 to trust the report. Outputs stored
 * through a presigned URL have none, and are checked there as before.
 */
async function allReceipted(env: Env, userId: string, taskId: string, outputs: readonly { filename: string; size: number; receipt?: string }[]): Promise<boolean> {
  for (const output of outputs) {
    if (!output.receipt) return false;
    // A receipt that does not verify is no receipt: the task's object checks the outputs in R2 instead.
    const receipt = await verifyToken<Receipt>(env.SIGNING_SECRET, RECEIPT, output.receipt).catch(() => undefined);
    if (receipt?.k !== outputKey(userId, taskId, output.filename) || receipt.s !== output.size) return false;
  }
  return true;
}

/** ffmpeg's stderr of the task, capped; kept as long as the task. */
async function storeLog(env: Env, userId: string, taskId: string, text: string): Promise<void> {
  const bytes = new TextEncoder().encode(text);
  // Keep the end: that is where ffmpeg says what went wrong.
  const kept = bytes.byteLength > JOB_LOG_MAX_BYTES ? bytes.subarray(bytes.byteLength - JOB_LOG_MAX_BYTES) : bytes;
  await env.FILES.put(logKey(userId, taskId), kept, { httpMetadata: { contentType: "text/plain; charset=utf-8" } });
}

internal.post("/internal/tasks/:task_id/outputs", async (c) => {
  // A body that is not JSON fails validation on the next line.
  const request = OutputUploadRequestSchema.safeParse(await c.req.json().catch(() => undefined));
  if (!request.success) throw new AppError("VALIDATION_FAILED", "Invalid output upload request.");
  const { filename, size, content_type } = request.data;
  checkOutput(c.env, filename, size);
  const taskId = c.get("taskId");
  const userId = await ownerOf(c.env, taskId, c.get("userId"));
  const key = outputKey(userId, taskId, filename);
  const contentType = essence(content_type) || "application/octet-stream";
  const expiresAt = expiryFrom(new Date(), c.env);
  // A transcoder in a Cloudflare Container calls through the Worker's outbound handler
  // (edge/dispatch/transcoder-container.ts), which streams its outputs into R2 itself: no
  // presigned URL, and no trip through the public hostname and its request-body limit.
  const inContainer = new URL(c.req.url).hostname === CONTAINER_EDGE_HOST;
  const presigned = inContainer ? undefined : await presignR2Put(c.env, { key, contentType, size, ttlSeconds: OUTPUT_URL_TTL_SECONDS });
  if (presigned) {
    // Written only while the task runs: an ended task gets no new outputs.
    const recorded = await insertOutputFile(c.env.DB, { key, user_id: userId, kind: "output", task_id: taskId, size, md5: null, content_type: contentType, original_name: filename, created_at: new Date().toISOString(), expires_at: expiresAt });
    if (!recorded) throw new AppError("TASK_NOT_RUNNABLE", "The task has already ended.");
    return c.json({ upload_url: presigned, key });
  }
  const token = await signToken(c.env.SIGNING_SECRET, "output", { k: key, u: userId, t: taskId, s: size, ct: contentType } satisfies Grant, OUTPUT_URL_TTL_SECONDS);
  const base = inContainer ? `https://${CONTAINER_EDGE_HOST}` : config(c.env).edgeUrl;
  return c.json({ upload_url: `${base}/internal/objects/${token}`, key });
});

/**
 * One output stored straight from the transcoder's PUT, authenticated by the task's callback
 * token: no grant request first. The job says when to use it (`outputs_direct`: the edge takes
 * the bytes itself, in a container or where no presigned R2 URL can be made).
 */
internal.put("/internal/tasks/:task_id/outputs/:filename", async (c) => {
  const filename = c.req.param("filename");
  const length = Number(c.req.header("content-length") ?? Number.NaN);
  if (!Number.isSafeInteger(length) || length < 0) throw new AppError("VALIDATION_FAILED", "An output upload needs its Content-Length.");
  checkOutput(c.env, filename, length);
  if (!c.req.raw.body) throw new AppError("EMPTY_FILE", "The output body is empty.");
  const taskId = c.get("taskId");
  const userId = await ownerOf(c.env, taskId, c.get("userId"));
  const declaredType = essence(c.req.header("content-type") ?? "") || "application/octet-stream";
  const record = await ingestUpload(c.env, userId, { body: c.req.raw.body, length, declaredType, filename, key: outputKey(userId, taskId, filename), taskId });
  return c.json({ key: record.key, size: record.size, md5: record.md5, receipt: await receiptFor(c.env, record.key, record.size) }, 201);
});

/** A name the transcoder may store and a size within the upload limit. */
function checkOutput(env: Env, filename: string, size: number): void {
  if (!OUTPUT_FILENAME.test(filename) || filename.includes("..")) throw new AppError("OUTPUT_NOT_ALLOWED", `'${filename}' is not an allowed output name.`);
  const limit = config(env).maxUploadBytes;
  if (size > limit) throw new AppError("PAYLOAD_TOO_LARGE", `Output '${filename}' is ${size} bytes; the limit is ${limit}.`);
}

// The local stand-in for a presigned R2 PUT of one output object.
internal.put("/internal/objects/:token", async (c) => {
  const grant = await verifyToken<Grant>(c.env.SIGNING_SECRET, "output", c.req.param("token"));
  const length = Number(c.req.header("content-length"));
  if (!Number.isFinite(length) || length !== grant.s) throw new AppError("SIZE_MISMATCH", `Content-Length must be ${grant.s}, as granted.`);
  if (!c.req.raw.body) throw new AppError("EMPTY_FILE", "The output body is empty.");
  const record = await ingestUpload(c.env, grant.u, { body: c.req.raw.body, length, declaredType: grant.ct, filename: grant.k.split("/").pop(), key: grant.k, taskId: grant.t });
  return c.json({ key: record.key, size: record.size, md5: record.md5, receipt: await receiptFor(c.env, record.key, record.size) }, 201);
});
