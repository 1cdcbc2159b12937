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
 * part. (workerd's `request.formData()` buffers the whole body in memory.)
 */
export async function withFilePart<T>(request: Request, handle: (part: FilePart) => Promise<T>): Promise<T> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data;/i.test(contentType) || !request.body) {
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", "Send the file as multipart/form-data with a part named 'file'.");
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: { "content-type": contentType }, limits: { files: 1, fields: 20, fieldSize: 64 * 1024, parts: 30 } });
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
      result = handle({ body: toWebStream(stream), filename: info.filename, declaredType: info.mimeType });
      result.catch(() => stream.resume());
    });
    parser.on("error", (error) => reject(new AppError("INVALID_MULTIPART", `The multipart body is malformed: ${(error as Error).message}.`)));
    parser.on("close", resolve);
  });
  parsed.catch(() => {});

  feed(request.body, parser).catch((error: unknown) => {
    parser.destroy(error instanceof Error ? error : new Error(String(error)));
  });
  try {
    await parsed;
  } catch (parseError) {
    await result?.catch(() => {});
    throw parseError;
  }
  if (!result) throw new AppError("MISSING_FILE_PART", "The multipart body has no part named 'file'.");
  return result;
}

async function feed(body: ReadableStream<Uint8Array>, parser: busboy.Busboy): Promise<void> {
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (parser.destroyed) {
      await reader.cancel();
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

function toWebStream(stream: Readable): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      stream.on("data", (chunk: Uint8Array) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 0) <= 0) stream.pause();
      });
      stream.on("end", () => controller.close());
      stream.on("error", (error) => controller.error(error));
    },
    pull() {
      stream.resume();
    },
    cancel() {
      stream.resume();
    },
  }, { highWaterMark: 4 });
}
