import { randomHex } from "../../../shared/encoding";
import { AppError } from "../../../shared/errors";
import type { UploadRecord } from "../../../shared/schemas/files";
import { config } from "../../lib/config";
import { purgeCached } from "../cdn-cache";
import { deleteFile, expiryFrom, findFile, sanitizeFilename, toUploadRecord } from "../records";
import { discardStoredBytes } from "./objects";
import type { UploadMetadata } from "./protocol";
import { type NewUpload, type TusUploadRow, findUpload, insertUpload, markTerminated } from "./repository";

/**
 * The size of every R2 part but the last: R2's minimum, so the tail a PATCH rewrites and the
 * part it holds in memory stay small. 1 GB is 205 parts, far below R2's 10,000.
 * https://developers.cloudflare.com/r2/objects/multipart-objects/
 */
export const TUS_PART_SIZE = 5 * 1024 * 1024;

const ID_PATTERN = /^upl_[0-9a-f]{32}$/;

export async function createUpload(env: Env, userId: string, length: number, metadata: UploadMetadata): Promise<NewUpload> {
  const limit = config(env).maxUploadBytes;
  if (length > limit) {
    throw new AppError("PAYLOAD_TOO_LARGE", `Upload-Length is ${length} bytes; the limit is ${limit} bytes.`, { limit }).withHeaders({ "Tus-Max-Size": String(limit) });
  }
  if (length === 0) throw new AppError("EMPTY_FILE", "Upload-Length is 0; an empty file cannot be stored.");
  const now = new Date();
  const row = {
    id: `upl_${randomHex(16)}`, user_id: userId, upload_length: length, metadata: metadata.raw, declared_type: metadata.filetype ?? null,
    original_name: sanitizeFilename(metadata.filename), part_size: TUS_PART_SIZE, created_at: now.toISOString(),
    // The file keeps the upload's expiry: R2 fixes an object's metadata when its multipart upload begins.
    expires_at: expiryFrom(now, env),
  };
  await insertUpload(env.DB, row);
  return row;
}

/** The caller's upload while it can still be used; 404 for unknown ids and other users', 410 once terminated or expired. */
export async function liveUpload(env: Env, userId: string, id: string): Promise<TusUploadRow> {
  const upload = ID_PATTERN.test(id) ? await findUpload(env.DB, userId, id) : null;
  if (!upload) throw new AppError("NOT_FOUND", `There is no upload '${id}'.`);
  if (upload.state === "terminated") throw new AppError("UPLOAD_GONE", `Upload '${id}' was terminated.`);
  if (Date.parse(upload.expires_at) <= Date.now()) throw new AppError("UPLOAD_GONE", `Upload '${id}' expired at ${upload.expires_at}.`);
  return upload;
}

/** The stored file of a completed upload, read from the file's own row (gone once deleted). */
export async function completedRecord(env: Env, upload: TusUploadRow): Promise<UploadRecord> {
  const file = upload.state === "completed" && upload.file_key ? await findFile(env.DB, upload.user_id, upload.file_key) : null;
  if (!file) throw new AppError("UPLOAD_GONE", `The file of upload '${upload.id}' has been deleted.`);
  return toUploadRecord(env, file);
}

/**
 * tus termination: frees everything the upload holds, the finished file included. The row
 * stays, terminated, until its expiry so later requests get 410; a PATCH still running loses
 * its lock at its next write.
 */
export async function terminateUpload(env: Env, upload: TusUploadRow): Promise<void> {
  await markTerminated(env.DB, upload.id);
  if (upload.state === "completed" && upload.file_key) {
    await deleteFile(env, { key: upload.file_key, user_id: upload.user_id });
    await purgeCached(env, [upload.file_key]);
  } else await discardStoredBytes(env.FILES, upload);
}
