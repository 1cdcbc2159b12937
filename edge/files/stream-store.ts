import { AppError } from "../../shared/errors";
import { toHex } from "../../shared/encoding";
import { forgetOpenMultipart, recordOpenMultipart } from "./open-multiparts";

/**
 * R2 multipart parts must all be the same size except the last, and at least 5 MiB.
 * https://developers.cloudflare.com/r2/objects/multipart-objects/
 * Two parts (one filling, one uploading) are the most the store ever holds in memory; 1 GB
 * is about 200 parts, well under R2's 10,000.
 */
export const PART_SIZE = 5 * 1024 * 1024;

export interface StoredObject {
  size: number;
  md5: string;
  /** The most bytes this store held at once: read from the body but not yet accepted by R2. */
  peakBufferedBytes: number;
}

/** What one finished `putStream` reports to observers (tests and benchmarks watch memory with it). */
export interface StoreReport extends StoredObject {
  key: string;
  multipart: boolean;
}

const observers = new Set<(report: StoreReport) => void>();

/** Calls `observer` after every successful store in this isolate; returns the unsubscribe function. */
export function observeStores(observer: (report: StoreReport) => void): () => void {
  observers.add(observer);
  return () => observers.delete(observer);
}

export interface PutOptions {
  /** Exact length when the sender declared it: the object is written in one streamed PUT. */
  length?: number;
  maxBytes: number;
  httpMetadata: R2HTTPMetadata;
  customMetadata: Record<string, string>;
  /** Names a failure of `body` itself (a dropped connection, a timeout) as an API error. */
  bodyError?: (error: unknown) => AppError;
  /** Where a multipart upload is recorded while open, for the sweep should this request die. */
  openUploads: D1Database;
}

/**
 * Streams `body` into R2 at `key` and returns its size and MD5. Either the whole object is
 * stored or none of it: a failed single PUT stores nothing and a failed multipart upload is
 * aborted. A declared length goes through one PUT (R2 computes the MD5; the bytes are passed
 * on, never copied); otherwise the body is cut into parts, at most two held at a time. A
 * store that stops taking bytes fails the upload (STORE_STALL_MS) rather than hang it.
 */
export async function putStream(bucket: R2Bucket, key: string, body: ReadableStream<Uint8Array>, options: PutOptions): Promise<StoredObject> {
  if (options.length !== undefined && options.length > options.maxBytes) throw tooLarge(options.maxBytes);
  const stored = options.length !== undefined
    ? await putWhole(bucket, key, body, options.length, options)
    : await putMultipart(bucket, key, body, options);
  for (const observer of observers) observer({ ...stored, key, multipart: options.length === undefined });
  return stored;
}

async function putWhole(bucket: R2Bucket, key: string, body: ReadableStream<Uint8Array>, length: number, options: PutOptions): Promise<StoredObject> {
  // R2.put needs a known length; FixedLengthStream also fails the PUT if the sender lied.
  const fixed = new FixedLengthStream(length);
  const stop = new AbortController();
  const feeding = feed(body, fixed.writable, stop.signal);
  let object: R2Object | null;
  try {
    object = await Promise.race([
      bucket.put(key, fixed.readable, { httpMetadata: options.httpMetadata, customMetadata: options.customMetadata }),
      feeding.then((error) => (isStoreStall(error) ? Promise.reject(error) : new Promise<never>(() => {}))),
    ]);
  } catch (putError) {
    stop.abort(putError);
    const feedError = await feeding;
    // The put may fail with the body's own error (a wrong length) before the copy reports it.
    if (feedError === undefined || feedError === STOPPED) throw isLengthError(putError) ? sizeMismatch(length) : putError;
    throw bodyFailure(feedError, length, options);
  }
  const feedError = await feeding;
  if (feedError) {
    await bucket.delete(key);
    throw bodyFailure(feedError, length, options);
  }
  // put() answers null only for a failed `onlyIf`, which is not used here.
  if (!object) throw new AppError("INTERNAL", "R2 did not store the object.");
  // R2 records the MD5 of every object written in one PUT.
  const md5 = object.checksums.md5 ? toHex(object.checksums.md5) : await md5OfStored(bucket, key);
  return { size: object.size, md5, peakBufferedBytes: 0 };
}

/**
 * How long R2 may leave one chunk of a streamed PUT untaken, or one call (a 5 MiB part, a
 * completion) unanswered. It takes bytes at network speed; a store that stopped (locally: a
 * full disk) may neither take more nor fail the call, which would otherwise leave the client
 * waiting for an answer that never comes.
 */
const STORE_STALL_MS = 15_000;

/** What `feed` ends with when its caller stopped it. */
const STOPPED = Symbol("stopped");

/**
 * Copies `body` into `writable`. Time spent waiting for the sender is its own business;
 * a write the store leaves pending for STORE_STALL_MS fails the copy. Resolves with what
 * ended the copy early (the body's error, the stall; STOPPED after `signal` aborted), or undefined.
 */
async function feed(body: ReadableStream<Uint8Array>, writable: WritableStream<Uint8Array>, signal: AbortSignal): Promise<unknown> {
  const reader = body.getReader();
  const writer = writable.getWriter();
  const watch = watchStore(signal);
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), watch.stopped]);
      if (done) break;
      await watch.store(writer.write(value));
    }
    await watch.store(writer.close());
    return undefined;
  } catch (error) {
    const stopped = signal.aborted && error === signal.reason;
    // Both ends are freed quietly: `error` is what the copy reports.
    await reader.cancel(error).catch(() => {});
    // Not awaited: a store that stalled may never settle it.
    writer.abort(error).catch(() => {});
    return stopped ? STOPPED : (error ?? new Error("The body failed."));
  } finally {
    watch.end();
  }
}

/**
 * One timer for a whole copy (a timer per chunk would cost more than the chunk): `store`
 * fails a write pending for STORE_STALL_MS; `stopped` rejects on a stall or when `signal` aborts.
 */
function watchStore(signal: AbortSignal): { store: <T>(write: Promise<T>) => Promise<T>; stopped: Promise<never>; end: () => void } {
  let pendingSince: number | undefined;
  let stop!: (reason: unknown) => void;
  const stopped = new Promise<never>((_, reject) => (stop = reject));
  stopped.catch(() => {}); // a stop after the copy has ended has no read left to fail
  const onAbort = () => stop(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });
  const timer = setInterval(() => {
    if (pendingSince !== undefined && Date.now() - pendingSince >= STORE_STALL_MS) stop(storeStall());
  }, 1_000);
  return {
    store: async (write) => {
      pendingSince = Date.now();
      try {
        return await Promise.race([write, stopped]);
      } finally {
        pendingSince = undefined;
      }
    },
    stopped,
    end: () => {
      clearInterval(timer);
      signal.removeEventListener("abort", onAbort);
    },
  };
}

/** One call to R2 that must settle within STORE_STALL_MS (a part, a small put, a completion). */
export function storeCall<T>(call: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(storeStall()), STORE_STALL_MS)));
  return Promise.race([call, stalled]).finally(() => clearTimeout(timer));
}

function storeStall(): AppError {
  return new AppError("STORAGE_UNAVAILABLE", `File storage took no bytes for ${STORE_STALL_MS / 1000} s, so nothing was stored; retry later.`).withHeaders({ "Retry-After": "30" });
}

function isStoreStall(error: unknown): error is AppError {
  return error instanceof AppError && error.code === "STORAGE_UNAVAILABLE";
}

/** Why a whole-object PUT failed, as an API error when it is the client's or the remote's doing. */
function bodyFailure(error: unknown, declared: number, options: PutOptions): unknown {
  if (error instanceof AppError) return error;
  if (isLengthError(error)) return sizeMismatch(declared);
  return options.bodyError?.(error) ?? error;
}

/** FixedLengthStream's own errors: too many bytes, or the body ended early. */
function isLengthError(error: unknown): boolean {
  return error instanceof Error && /FixedLengthStream/.test(error.message);
}

async function md5OfStored(bucket: R2Bucket, key: string): Promise<string> {
  const object = await bucket.get(key);
  if (!object) throw new AppError("INTERNAL", "The stored object vanished before its MD5 could be read.");
  const digest = new crypto.DigestStream("MD5");
  await object.body.pipeTo(digest);
  return toHex(await digest.digest);
}

/**
 * Cuts the body into parts of PART_SIZE. Two part buffers take turns: one is uploading while
 * the other fills, so the body keeps flowing during R2's round trip, and never more than two
 * parts are held.
 */
async function putMultipart(bucket: R2Bucket, key: string, body: ReadableStream<Uint8Array>, options: PutOptions): Promise<StoredObject> {
  const reader = body.getReader();
  const digest = new crypto.DigestStream("MD5");
  // Aborting the hasher on failure rejects `digest`; nothing waits on it then.
  digest.digest.catch(() => {});
  const hasher = digest.getWriter();
  const buffers: Uint8Array[] = [];
  let current = 0;
  let filled = 0;
  let size = 0;
  let inFlightBytes = 0;
  let peakBufferedBytes = 0;
  let inFlight: Promise<void> = Promise.resolve();
  let upload: R2MultipartUpload | undefined;
  const parts: R2UploadedPart[] = [];
  // A part goes to R2 and to the MD5 as a view of its buffer: nothing writes to that buffer
  // again until both have taken it, and a copy would hold the part twice.
  const startPart = async () => {
    const part = buffers[current]!.subarray(0, filled);
    await inFlight;
    upload ??= await openMultipart(bucket, key, options);
    const index = parts.length;
    parts.length++;
    inFlightBytes = part.byteLength;
    inFlight = Promise.all([storeCall(upload.uploadPart(index + 1, part)), hasher.write(part)]).then(([uploaded]) => {
      parts[index] = uploaded;
      inFlightBytes = 0;
    });
    inFlight.catch(() => {}); // awaited by the next part or at the end; handled until then
    current = 1 - current;
    filled = 0;
  };
  try {
    for (;;) {
      const { done, value } = await readBody(reader, options);
      if (done) break;
      size += value.byteLength;
      if (size > options.maxBytes) throw tooLarge(options.maxBytes);
      peakBufferedBytes = Math.max(peakBufferedBytes, inFlightBytes + filled + value.byteLength);
      for (let offset = 0; offset < value.byteLength;) {
        const buffer = (buffers[current] ??= new Uint8Array(PART_SIZE));
        const take = Math.min(PART_SIZE - filled, value.byteLength - offset);
        buffer.set(value.subarray(offset, offset + take), filled);
        filled += take;
        offset += take;
        if (filled === PART_SIZE) await startPart();
      }
    }
    if (!upload) {
      // Small enough for one PUT: no multipart upload needed.
      const rest = (buffers[current] ?? new Uint8Array(0)).subarray(0, filled);
      await Promise.all([storeCall(bucket.put(key, rest, { httpMetadata: options.httpMetadata, customMetadata: options.customMetadata })), hasher.write(rest)]);
    } else {
      if (filled > 0) await startPart();
      await inFlight;
      await storeCall(upload.complete(parts));
      // A record left behind only has the sweep abort a completed upload, which fails harmlessly.
      await forgetOpenMultipart(options.openUploads, upload.uploadId).catch(() => {});
    }
    await hasher.close();
    return { size, md5: toHex(await digest.digest), peakBufferedBytes };
  } catch (error) {
    reader.releaseLock();
    // Frees what the upload holds; `error`, thrown below, is what the caller hears.
    await body.cancel().catch(() => {});
    await inFlight.catch(() => {});
    if (upload) await abortMultipart(upload, options.openUploads);
    await hasher.abort().catch(() => {}); // only rejects `digest`, which nobody awaits now
    throw error;
  }
}

/** A new multipart upload, recorded as open; nothing is left open if the record fails. */
async function openMultipart(bucket: R2Bucket, key: string, options: PutOptions): Promise<R2MultipartUpload> {
  const upload = await storeCall(bucket.createMultipartUpload(key, { httpMetadata: options.httpMetadata, customMetadata: options.customMetadata }));
  try {
    await recordOpenMultipart(options.openUploads, upload);
  } catch (error) {
    await storeCall(upload.abort()).catch(() => {}); // left unrecorded, R2's 7-day rule ends it; the record's failure is thrown below
    throw error;
  }
  return upload;
}

/** Frees the parts; a record that cannot be dropped now only makes the sweep abort it again. */
async function abortMultipart(upload: R2MultipartUpload, openUploads: D1Database): Promise<void> {
  try {
    await storeCall(upload.abort());
    await forgetOpenMultipart(openUploads, upload.uploadId);
  } catch {
    // Left recorded: the sweep aborts it later.
  }
}

async function readBody(reader: ReadableStreamDefaultReader<Uint8Array>, options: PutOptions): Promise<ReadableStreamReadResult<Uint8Array>> {
  try {
    return await reader.read();
  } catch (error) {
    throw error instanceof AppError ? error : (options.bodyError?.(error) ?? error);
  }
}

export function tooLarge(maxBytes: number): AppError {
  return new AppError("PAYLOAD_TOO_LARGE", `The file is larger than the limit of ${maxBytes} bytes.`, { limit: maxBytes });
}

function sizeMismatch(declared: number): AppError {
  return new AppError("SIZE_MISMATCH", `The body was not the ${declared} bytes its Content-Length declared.`);
}

/**
 * Reads at least `bytes` bytes (or the whole stream if shorter) so the caller can look at
 * the start of a file, and returns a stream that still yields every byte. It is a branch of
 * `body.tee()`: for a request or response body that branch stays a native stream, so piping
 * it on costs no JavaScript per chunk.
 */
export async function peek(body: ReadableStream<Uint8Array>, bytes: number): Promise<{ head: Uint8Array; body: ReadableStream<Uint8Array> }> {
  const [probe, rest] = body.tee();
  const reader = probe.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length < bytes) {
      const result = await reader.read();
      if (result.done) break;
      chunks.push(result.value);
      length += result.value.byteLength;
    }
  } catch (error) {
    await rest.cancel(error).catch(() => {}); // the read's own failure is thrown below
    throw error;
  }
  await reader.cancel().catch(() => {}); // the probe is done with; `rest` still yields every byte
  const head = concat(chunks, length);
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
