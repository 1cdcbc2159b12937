import { AppError } from "../../../shared/errors";
import type { UploadRecord } from "../../../shared/schemas/files";
import { SNIFF_BYTES } from "../content-type";
import { type ClassifiedFile, classifyFile, storedHttpMetadata } from "../ingest";
import { type FileRow, deleteFileRow, insertFileStatement, toUploadRecord } from "../records";
import { storeCall } from "../stream-store";
import { ResumableMd5 } from "./md5";
import { discardStoredBytes, readTail, tailKey, writeTail } from "./objects";
import { type Progress, type TusUploadRow, commitProgress, completeStatement, markTerminated, renewLock } from "./repository";

/**
 * How long a PATCH holds an upload without renewing. It renews only while bytes flow (after a
 * chunk, before each write to R2, once a third of the lease has passed), so the lock ends with
 * its connection: one that broke off releases it at once, and one whose runtime died (a
 * restart) or whose client went silent frees it within this lease, for the client's resume.
 * A write starts with at least 10 s of lease left; R2 calls are bounded (storeCall) at 15 s,
 * and one outliving the lease only loses the lock, never the upload's committed bytes.
 */
export const LOCK_LEASE_MS = 15_000;
const RENEW_AFTER_MS = 5_000;

export interface AppendResult {
  /** Bytes of the upload durably stored now. */
  offset: number;
  /** Set when this PATCH finished the upload. */
  record?: UploadRecord;
}

/** Thrown when the lock was lost mid-PATCH: nothing more may be written. */
export class LockLost extends Error {}

/**
 * Appends a PATCH body to an upload this request has locked. Full parts go to the R2 multipart
 * upload as they fill; whatever is below a part when the body ends, or breaks off, is kept in
 * the tail object. Either way the stored offset afterwards is every byte received (tus: after
 * a dropped connection the client resumes from what the server saved).
 */
export async function appendToUpload(env: Env, upload: TusUploadRow, token: string, body: ReadableStream<Uint8Array> | null): Promise<AppendResult> {
  const appender = new Appender(env, upload, token, await readTail(env.FILES, upload));
  let interrupted = false;
  if (body) {
    const reader = body.getReader();
    try {
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch {
          interrupted = true;
          break;
        }
        if (chunk.done) break;
        // Bytes past Upload-Length are not part of the file; like tusd, stop reading there.
        if (!(await appender.write(chunk.value))) {
          // The rest of the body is not wanted; a client that has gone has nothing to cancel.
          await reader.cancel().catch(() => {});
          break;
        }
      }
    } catch (error) {
      // Stops the read; `error`, thrown below, is what the client hears.
      await reader.cancel().catch(() => {});
      if (error instanceof AppError && error.code === "CONTENT_TYPE_MISMATCH") {
        // The first bytes never change: this upload can never be accepted.
        await markTerminated(env.DB, upload.id);
        await discardStoredBytes(env.FILES, appender.storedObjects());
        throw error;
      }
      // R2 or D1 failed mid-body: keep what was received below the end, then report the failure.
      if (!(error instanceof LockLost) && !appender.complete) await appender.persist().catch(() => {});
      throw error;
    }
  }
  if (appender.complete) return { offset: upload.upload_length, record: await appender.finish() };
  await appender.persist();
  if (interrupted) {
    throw new AppError("UPLOAD_INTERRUPTED", `The request body broke off; the upload has ${appender.offset} bytes stored. Resume from there.`, {
      upload_offset: appender.offset,
    }).withHeaders({ "Upload-Offset": String(appender.offset) });
  }
  return { offset: appender.offset };
}

class Appender {
  offset: number;
  private readonly buffer: Uint8Array;
  private filled: number;
  private committedOffset: number;
  private readonly parts: R2UploadedPart[];
  private readonly md5: ResumableMd5;
  private classified: ClassifiedFile | null;
  private multipart: R2MultipartUpload | null;
  private lastRenewal: number;

  constructor(
    private readonly env: Env,
    private readonly upload: TusUploadRow,
    private readonly token: string,
    tail: Uint8Array,
  ) {
    // The lease began when the lock was taken, before the tail was read.
    this.lastRenewal = (upload.lock_expires_at ?? 0) - LOCK_LEASE_MS;
    this.offset = upload.upload_offset;
    this.committedOffset = upload.upload_offset;
    // The buffer starts where the tail starts and never holds more than one part.
    const bufferStart = upload.upload_offset - tail.byteLength;
    this.buffer = new Uint8Array(Math.min(upload.part_size, upload.upload_length - bufferStart));
    this.buffer.set(tail);
    this.filled = tail.byteLength;
    this.parts = JSON.parse(upload.parts) as R2UploadedPart[];
    this.md5 = new ResumableMd5(upload.md5_state);
    this.classified = upload.content_type && upload.file_key
      ? { contentType: upload.content_type, key: upload.file_key, originalName: upload.original_name, downloadOnly: upload.download_only === 1 }
      : null;
    this.multipart = upload.multipart_id && upload.file_key ? env.FILES.resumeMultipartUpload(upload.file_key, upload.multipart_id) : null;
  }

  get complete(): boolean {
    return this.offset === this.upload.upload_length;
  }

  /** Takes `chunk` in; false when the upload is full and the rest of the body must be left unread. */
  async write(chunk: Uint8Array): Promise<boolean> {
    let at = 0;
    while (at < chunk.byteLength) {
      if (this.complete) return false;
      if (this.filled === this.buffer.byteLength) await this.flushPart();
      const take = Math.min(this.buffer.byteLength - this.filled, chunk.byteLength - at);
      const piece = chunk.subarray(at, at + take);
      this.buffer.set(piece, this.filled);
      this.md5.update(piece);
      this.filled += take;
      this.offset += take;
      at += take;
      // The buffer starts at byte 0 until the first part is flushed, and a part is far larger than SNIFF_BYTES.
      if (!this.classified && (this.filled >= SNIFF_BYTES || this.complete)) this.classify();
    }
    await this.renew();
    return !this.complete || at === chunk.byteLength;
  }

  /** Stores the bytes below a part as the tail and commits the offset they reach. */
  async persist(): Promise<void> {
    if (this.offset === this.committedOffset) return;
    await this.renew();
    await writeTail(this.env.FILES, this.upload.id, this.buffer.subarray(0, this.filled));
    await this.commit(this.filled);
  }

  /** Stores the last part, completes the object and records the file, all or nothing. */
  async finish(): Promise<UploadRecord> {
    const file = this.classified ?? this.classify();
    await this.renew();
    if (this.multipart) {
      if (this.filled > 0) this.parts.push(await storeCall(this.multipart.uploadPart(this.parts.length + 1, this.buffer.subarray(0, this.filled))));
      await storeCall(this.multipart.complete(this.parts));
    } else {
      await storeCall(this.env.FILES.put(file.key, this.buffer.subarray(0, this.filled), { httpMetadata: storedHttpMetadata(file), customMetadata: this.customMetadata() }));
    }
    const row: FileRow = {
      key: file.key, user_id: this.upload.user_id, kind: "upload", task_id: null, size: this.upload.upload_length, md5: this.md5.hex(),
      content_type: file.contentType, original_name: this.upload.original_name, created_at: new Date().toISOString(), expires_at: this.upload.expires_at,
    };
    try {
      const [, completed] = await this.env.DB.batch([insertFileStatement(this.env.DB, row), completeStatement(this.env.DB, this.upload.id, this.token, this.progress(0))]);
      if (completed?.meta.changes !== 1) throw new LockLost();
    } catch (error) {
      // Only a lost lock leaves the row (a failed batch rolls back whole); if D1 fails here too, the expiry sweep removes it.
      await deleteFileRow(this.env.DB, file.key).catch(() => {});
      await this.env.FILES.delete(file.key);
      throw error;
    }
    await this.env.FILES.delete(tailKey(this.upload.id));
    return toUploadRecord(this.env, row);
  }

  /** What this upload may hold in R2 right now, for a clean-up. */
  storedObjects(): Pick<TusUploadRow, "id" | "file_key" | "multipart_id"> {
    return { id: this.upload.id, file_key: this.classified?.key ?? null, multipart_id: this.multipart?.uploadId ?? null };
  }

  private classify(): ClassifiedFile {
    const head = this.buffer.subarray(0, Math.min(this.filled, SNIFF_BYTES));
    this.classified = classifyFile(this.upload.user_id, { declaredType: this.upload.declared_type ?? undefined, filename: this.upload.original_name ?? undefined }, head);
    return this.classified;
  }

  private async flushPart(): Promise<void> {
    const file = this.classified ?? this.classify();
    await this.renew();
    this.multipart ??= await storeCall(this.env.FILES.createMultipartUpload(file.key, { httpMetadata: storedHttpMetadata(file), customMetadata: this.customMetadata() }));
    // A view of the one reusable buffer: nothing writes to it until uploadPart has resolved.
    this.parts.push(await storeCall(this.multipart.uploadPart(this.parts.length + 1, this.buffer.subarray(0, this.filled))));
    this.filled = 0;
    await this.commit(0);
  }

  private customMetadata(): Record<string, string> {
    return { user_id: this.upload.user_id, expires_at: this.upload.expires_at };
  }

  private progress(tailSize: number): Progress {
    return {
      upload_offset: this.offset, parts: JSON.stringify(this.parts), tail_size: tailSize, md5_state: this.md5.state(),
      content_type: this.classified?.contentType ?? null, download_only: this.classified?.downloadOnly ? 1 : 0,
      file_key: this.classified?.key ?? null, multipart_id: this.multipart?.uploadId ?? null,
    };
  }

  private async commit(tailSize: number): Promise<void> {
    if (!(await commitProgress(this.env.DB, this.upload.id, this.token, this.progress(tailSize), LOCK_LEASE_MS))) throw new LockLost();
    this.committedOffset = this.offset;
    this.lastRenewal = Date.now();
  }

  /** Keeps the lock alive, so a PATCH that lost it never overwrites another's parts or tail. */
  private async renew(): Promise<void> {
    if (Date.now() - this.lastRenewal < RENEW_AFTER_MS) return;
    if (!(await renewLock(this.env.DB, this.upload.id, this.token, LOCK_LEASE_MS))) throw new LockLost();
    this.lastRenewal = Date.now();
  }
}
