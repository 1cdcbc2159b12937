import busboy from "busboy";
import type { Readable } from "node:stream";
import { AppError } from "../../shared/errors";

export interface FilePart {
  body: ReadableStream<Uint8Array>;
  filename?: string;
  declaredType?: string;
}

/**
 * Streams the part named `file` of a multipart/form-data request to `handle`, with
 * backpressure end to end: the request body is read only as fast as `handle` consumes the
 * part. (workerd's `request.formData()` buffers the whole body in memory.) A body that turns
 * out to be bad after `handle` finished (a second file part) is refused, and `undo` takes back
 * what `handle` did.
 */
export async function withFilePart<T>(request: Request, handle: (part: FilePart) => Promise<T>, undo?: (value: T) => Promise<void>): Promise<T> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data;/i.test(contentType) || !request.body) {
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", "Send the file as multipart/form-data with a part named 'file'.");
  }
  let parser: busboy.Busboy;
  try {
    // Browsers send file names as raw UTF-8; busboy's default (latin1) would garble them.
    parser = busboy({ headers: { "content-type": contentType }, defParamCharset: "utf8", limits: { files: 1, fields: 20, fieldSize: 64 * 1024, parts: 30 } });
  } catch {
    throw new AppError("INVALID_MULTIPART", "The multipart/form-data Content-Type has no usable boundary.");
  }

  let result: Promise<T> | undefined;
  const parsed = new Promise<void>((resolve, reject) => {
    parser.on("file", (name, stream, info) => {
      if (name !== "file" || result) {
        stream.resume();
        return;
      }
      // Called on a later tick: a throw inside busboy's event would pose as a malformed body.
      result = Promise.resolve().then(() => handle({ body: toWebStream(stream), filename: info.filename, declaredType: info.mimeType }));
      // A refused file (too large, wrong type) ends the request now: reading the rest of a
      // 1 GB body only to throw it away would keep the client and the Worker busy for nothing.
      result.catch(reject);
    });
    parser.on("error", (error) => reject(new AppError("INVALID_MULTIPART", `The multipart body is malformed: ${(error as Error).message}.`)));
    // busboy skips file parts past `limits.files`; a second file is the client's mistake, not something to ignore.
    parser.on("filesLimit", () => reject(new AppError("INVALID_MULTIPART", "The body has more than one file part; send one file per request, in the part named 'file'.")));
    parser.on("close", resolve);
  });
  // Awaited below, once the feed has started; handled until then.
  parsed.catch(() => {});

  feed(request.body, parser).catch((error: unknown) => {
    parser.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  try {
    await parsed;
  } catch (failure) {
    // Stops the feed and fails the file stream, so the handler cleans up before we answer.
    parser.destroy();
    const settled = await result?.then((value) => ({ value }), () => undefined);
    if (settled && undo) await undo(settled.value);
    throw failure;
  }
  if (!result) throw new AppError("MISSING_FILE_PART", "The multipart body has no part named 'file'.");
  return result;
}

/**
 * Request bodies arrive in 4 KiB chunks, and each chunk costs several JavaScript hops through
 * busboy and the stream store, so the body is read in chunks of at least this size instead
 * (bench/upload.ts: 256 KiB was no faster and left V8 more garbage to collect per upload).
 */
const FEED_CHUNK_BYTES = 64 * 1024;

async function feed(body: ReadableStream<Uint8Array>, parser: busboy.Busboy): Promise<void> {
  const read = largeChunkReader(body);
  for (;;) {
    const { done, value } = await read.next();
    if (done) break;
    if (parser.destroyed) {
      await read.cancel();
      return;
    }
    if (!parser.write(value)) {
      await new Promise<void>((resolve) => {
        const settle = () => { parser.off("drain", settle); parser.off("close", settle); resolve(); };
        parser.once("drain", settle);
        parser.once("close", settle);
      });
    }
  }
  parser.end();
}

/**
 * Reads `body` in chunks of at least FEED_CHUNK_BYTES where the runtime can (workerd's
 * `readAtLeast` on a byte stream); a body that is not a byte stream is read as it comes.
 */
function largeChunkReader(body: ReadableStream<Uint8Array>): { next: () => Promise<ReadableStreamReadResult<Uint8Array>>; cancel: () => Promise<void> } {
  let byob: ReadableStreamBYOBReader | undefined;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    const reader = body.getReader();
    return { next: () => reader.read(), cancel: () => reader.cancel() };
  }
  const reader = byob;
  return {
    next: async () => {
      const result = await reader.readAtLeast(FEED_CHUNK_BYTES, new Uint8Array(FEED_CHUNK_BYTES));
      // The last read may return the final bytes together with done, or an empty view.
      if (result.value && result.value.byteLength > 0) return { done: false, value: result.value };
      return { done: true, value: undefined };
    },
    cancel: () => reader.cancel(),
  };
}

function toWebStream(stream: Readable): ReadableStream<Uint8Array> {
  let canceled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      stream.on("data", (chunk: Uint8Array) => {
        if (canceled) return;
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) stream.pause();
      });
      stream.on("end", () => canceled || controller.close());
      stream.on("error", (error) => canceled || controller.error(error));
    },
    pull() {
      stream.resume();
    },
    cancel() {
      // Left paused, so busboy stops taking the request body: the handler's rejection follows
      // and ends the parse without reading (or draining) the rest of the upload.
      canceled = true;
      stream.pause();
    },
  }, { highWaterMark: 4 });
}
