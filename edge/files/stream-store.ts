import { AppError } from "../../shared/errors";
import { toHex } from "../../shared/api-keys";

/**
 * R2 multipart parts must all be the same size except the last, and at least 5 MiB.
 * https://developers.cloudflare.com/r2/objects/multipart-objects/
 * One part is the most the store ever holds in memory.
 */
export const PART_SIZE = 10 * 1024 * 1024;

export interface StoredObject {
  size: number;
  md5: string;
}

export interface PutOptions {
  /** Exact length when the sender declared it: the object is written in one streamed PUT. */
  length?: number;
  maxBytes: number;
  httpMetadata: R2HTTPMetadata;
  customMetadata: Record<string, string>;
}

/**
 * Streams `body` into R2 at `key`, counting bytes and computing MD5 on the way, never
 * holding more than one part in memory. Either the whole object is stored or none of it:
 * a failed single PUT stores nothing and a failed multipart upload is aborted.
 */
export async function putStream(bucket: R2Bucket, key: string, body: ReadableStream<Uint8Array>, options: PutOptions): Promise<StoredObject> {
  if (options.length !== undefined && options.length > options.maxBytes) throw tooLarge(options.maxBytes);
  const meter = new Meter(options.maxBytes);
  const metered = body.pipeThrough(meter.transform());
  if (options.length !== undefined) {
    // R2.put needs a known length; FixedLengthStream also fails the PUT if the sender lied.
    const fixed = new FixedLengthStream(options.length);
    const piping = metered.pipeTo(fixed.writable).catch((error: unknown) => error);
    try {
      await bucket.put(key, fixed.readable, { httpMetadata: options.httpMetadata, customMetadata: options.customMetadata });
    } catch (error) {
      throw (await meter.failure(piping)) ?? sizeMismatch(options.length, meter.size);
    }
    const pipeError = await piping;
    if (pipeError) {
      await bucket.delete(key);
      throw pipeError instanceof AppError ? pipeError : sizeMismatch(options.length, meter.size);
    }
  } else {
    await putMultipart(bucket, key, metered, options);
  }
  return { size: meter.size, md5: await meter.md5() };
}

async function putMultipart(bucket: R2Bucket, key: string, body: ReadableStream<Uint8Array>, options: PutOptions): Promise<void> {
  const reader = body.getReader();
  const buffer = new Uint8Array(PART_SIZE);
  let filled = 0;
  let upload: R2MultipartUpload | undefined;
  const parts: R2UploadedPart[] = [];
  const flushPart = async () => {
    upload ??= await bucket.createMultipartUpload(key, { httpMetadata: options.httpMetadata, customMetadata: options.customMetadata });
    parts.push(await upload.uploadPart(parts.length + 1, buffer.slice(0, filled)));
    filled = 0;
  };
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let offset = 0;
      while (offset < value.byteLength) {
        const take = Math.min(PART_SIZE - filled, value.byteLength - offset);
        buffer.set(value.subarray(offset, offset + take), filled);
        filled += take;
        offset += take;
        if (filled === PART_SIZE) await flushPart();
      }
    }
    if (!upload) {
      // Small enough for one PUT: no multipart upload needed.
      await bucket.put(key, buffer.slice(0, filled), { httpMetadata: options.httpMetadata, customMetadata: options.customMetadata });
      return;
    }
    if (filled > 0) await flushPart();
    await upload.complete(parts);
  } catch (error) {
    reader.releaseLock();
    await body.cancel().catch(() => {});
    await upload?.abort().catch(() => {});
    throw error;
  }
}

/** Counts bytes, enforces the size limit and computes MD5 as bytes pass through. */
class Meter {
  size = 0;
  private readonly digest = new crypto.DigestStream("MD5");
  private readonly writer = this.digest.getWriter();
  private error: unknown;

  constructor(private readonly maxBytes: number) {}

  transform(): TransformStream<Uint8Array, Uint8Array> {
    return new TransformStream({
      transform: async (chunk, controller) => {
        this.size += chunk.byteLength;
        if (this.size > this.maxBytes) {
          this.error = tooLarge(this.maxBytes);
          throw this.error;
        }
        await this.writer.write(chunk);
        controller.enqueue(chunk);
      },
    });
  }

  async md5(): Promise<string> {
    await this.writer.close();
    return toHex(await this.digest.digest);
  }

  /** The meter's own error (e.g. too large) if the pipe failed because of it. */
  async failure(piping: Promise<unknown>): Promise<unknown> {
    const pipeError = await piping;
    return this.error ?? (pipeError instanceof AppError ? pipeError : undefined);
  }
}

export function tooLarge(maxBytes: number): AppError {
  return new AppError("PAYLOAD_TOO_LARGE", `The file is larger than the limit of ${maxBytes} bytes.`, { limit: maxBytes });
}

function sizeMismatch(declared: number, received: number): AppError {
  return new AppError("SIZE_MISMATCH", `The body was ${received} bytes but ${declared} bytes were declared.`);
}

/**
 * Reads at least `bytes` bytes (or the whole stream if shorter) so the caller can look at
 * the start of a file, and returns a stream that still yields every byte.
 */
export async function peek(body: ReadableStream<Uint8Array>, bytes: number): Promise<{ head: Uint8Array; body: ReadableStream<Uint8Array> }> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  let done = false;
  while (length < bytes) {
    const result = await reader.read();
    if (result.done) {
      done = true;
      break;
    }
    chunks.push(result.value);
    length += result.value.byteLength;
  }
  const head = concat(chunks, length);
  const rest = new ReadableStream<Uint8Array>({
    start(controller) {
      if (head.byteLength > 0) controller.enqueue(head);
      if (done) controller.close();
    },
    async pull(controller) {
      const result = await reader.read();
      if (result.done) controller.close();
      else controller.enqueue(result.value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  }, { highWaterMark: 0 });
  return { head: head.subarray(0, Math.min(bytes, head.byteLength)), body: rest };
}

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}
