import { AppError } from "../../shared/errors";
import type { UploadRecord } from "../../shared/schemas/files";
import { config } from "../lib/config";
import { SNIFF_BYTES, extensionFor, resolveContentType, sniff } from "./content-type";
import { expiryFrom, insertFile, insertOutputFile, newUploadKey, sanitizeFilename, toUploadRecord } from "./records";
import { peek, putStream } from "./stream-store";

export interface IncomingFile {
  body: ReadableStream<Uint8Array>;
  declaredType?: string;
  /** Exact byte length when known up front. */
  length?: number;
  filename?: string;
  /** A key handed out in advance (signed uploads, task outputs); otherwise a fresh one is made. */
  key?: string;
  /**
   * Set for a task's output files: recorded only while `whileUnfinished` holds, an SQL condition
   * binding (task id, user id) from the tasks' owner (files never import the core).
   */
  task?: { id: string; whileUnfinished: string };
  /** Names a failure of `body` itself (e.g. a remote that drops the connection) as an API error. */
  bodyError?: (error: unknown) => AppError;
}

/**
 * The one path every upload method ends in: decide the type from the first bytes, stream the
 * rest into R2, then record the row. Nothing is left behind when any step fails.
 */
export async function ingestUpload(env: Env, userId: string, file: IncomingFile): Promise<UploadRecord> {
  const maxBytes = config(env).maxUploadBytes;
  if (file.length !== undefined && file.length > maxBytes) {
    // Only frees the body: the refusal thrown next is the answer.
    await file.body.cancel().catch(() => {});
    throw new AppError("PAYLOAD_TOO_LARGE", `The file is ${file.length} bytes; the limit is ${maxBytes} bytes.`, { limit: maxBytes });
  }
  const { head, body } = await peek(file.body, SNIFF_BYTES);
  if (head.byteLength === 0) {
    // Only frees the body: the refusal thrown next is the answer.
    await body.cancel().catch(() => {});
    throw new AppError("EMPTY_FILE", "The file is empty.");
  }
  let classified: ClassifiedFile;
  try {
    classified = classifyFile(userId, file, head);
  } catch (error) {
    // Only frees the body: `error`, thrown next, is the answer.
    await body.cancel().catch(() => {});
    throw error;
  }
  const { contentType, originalName, key } = classified;
  const now = new Date();
  const expiresAt = expiryFrom(now, env);
  const stored = await putStream(env.FILES, key, body, {
    length: file.length,
    maxBytes,
    httpMetadata: storedHttpMetadata(classified),
    customMetadata: { user_id: userId, expires_at: expiresAt },
    bodyError: file.bodyError,
    openUploads: env.DB,
  });
  const row = {
    key, user_id: userId, kind: file.task ? ("output" as const) : ("upload" as const), task_id: file.task?.id ?? null, size: stored.size, md5: stored.md5,
    content_type: contentType, original_name: originalName, created_at: now.toISOString(), expires_at: expiresAt,
  };
  let recorded: boolean;
  try {
    recorded = file.task ? await insertOutputFile(env.DB, { ...row, task_id: file.task.id }, file.task.whileUnfinished) : (await insertFile(env.DB, row), true);
  } catch (error) {
    await env.FILES.delete(key);
    throw error;
  }
  if (!recorded) {
    await env.FILES.delete(key);
    throw new AppError("TASK_NOT_RUNNABLE", "The task has already ended.");
  }
  return toUploadRecord(env, row);
}

export interface ClassifiedFile {
  contentType: string;
  originalName: string | null;
  key: string;
  /**
   * Markup stored under a harmless declared type (text/plain, octet-stream) would still render
   * if a browser ever sniffed it: the object itself records that it is only ever downloaded.
   */
  downloadOnly: boolean;
}

/**
 * What the first bytes (`SNIFF_BYTES`, or the whole file if shorter) decide about an upload:
 * its stored type (throws CONTENT_TYPE_MISMATCH), its key and how it is served.
 */
export function classifyFile(userId: string, file: Pick<IncomingFile, "declaredType" | "filename" | "key">, head: Uint8Array): ClassifiedFile {
  const contentType = resolveContentType(file.declaredType, file.filename, head);
  const originalName = sanitizeFilename(file.filename);
  const key = file.key ?? newUploadKey(userId, extensionFor(contentType, originalName ?? undefined));
  return { contentType, originalName, key, downloadOnly: sniff(head)?.family === "markup" };
}

export function storedHttpMetadata(file: Pick<ClassifiedFile, "contentType" | "downloadOnly">): R2HTTPMetadata {
  return { contentType: file.contentType, contentDisposition: file.downloadOnly ? "attachment" : undefined };
}
