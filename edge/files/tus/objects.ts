import { AppError } from "../../../shared/errors";
import type { TusUploadRow } from "./repository";

/**
 * R2 wants every multipart part but the last at one size of at least 5 MiB; the bytes of an
 * unfinished upload past its last full part wait in this small object until the next PATCH
 * completes a part. https://developers.cloudflare.com/r2/objects/multipart-objects/
 */
export function tailKey(uploadId: string): string {
  return `tus/${uploadId}/tail`;
}

/**
 * The committed tail bytes. A PATCH writes the tail before committing its size, so the object
 * may be longer than the row says (that PATCH's commit failed); its first `tail_size` bytes are
 * still the committed ones, because each tail starts with the one before it.
 */
export async function readTail(bucket: R2Bucket, upload: Pick<TusUploadRow, "id" | "tail_size">): Promise<Uint8Array> {
  if (upload.tail_size === 0) return new Uint8Array(0);
  const object = await bucket.get(tailKey(upload.id));
  const bytes = object ? new Uint8Array(await object.arrayBuffer()) : new Uint8Array(0);
  if (bytes.byteLength < upload.tail_size) {
    throw new AppError("INTERNAL", `The stored tail of upload ${upload.id} has ${bytes.byteLength} bytes; ${upload.tail_size} were committed.`);
  }
  return bytes.subarray(0, upload.tail_size);
}

export async function writeTail(bucket: R2Bucket, uploadId: string, bytes: Uint8Array): Promise<void> {
  await bucket.put(tailKey(uploadId), bytes);
}

/** Frees everything an unfinished upload holds in R2. Each step may already have happened. */
export async function discardStoredBytes(bucket: R2Bucket, upload: Pick<TusUploadRow, "id" | "file_key" | "multipart_id">): Promise<void> {
  if (upload.file_key && upload.multipart_id) {
    // Fails when already completed or aborted: then it holds nothing.
    await bucket.resumeMultipartUpload(upload.file_key, upload.multipart_id).abort().catch(() => {});
  }
  await bucket.delete(tailKey(upload.id));
}
