import { env } from "cloudflare:test";
import { api } from "../../helpers";

/** A minimal tus 1.0 client over SELF.fetch, so tests speak the protocol header by header. */
export const TUS = { "Tus-Resumable": "1.0.0" };
export const OCTETS = { "Content-Type": "application/offset+octet-stream" };

export function metadataHeader(pairs: Record<string, string>): string {
  const encode = (value: string) => btoa(String.fromCharCode(...new TextEncoder().encode(value)));
  return Object.entries(pairs).map(([key, value]) => `${key} ${encode(value)}`).join(",");
}

export async function createUpload(key: string, length: number, metadata: Record<string, string> = { filename: "clip.mp4", filetype: "video/mp4" }, headers: Record<string, string> = {}): Promise<{ response: Response; path: string; id: string }> {
  const response = await api("/api/upload/tus", key, { method: "POST", headers: { ...TUS, "Upload-Length": String(length), "Upload-Metadata": metadataHeader(metadata), ...headers } });
  const location = response.headers.get("location") ?? "";
  const path = location ? new URL(location).pathname : "";
  return { response, path, id: path.split("/").pop() ?? "" };
}

export function patch(key: string | undefined, path: string, offset: number, body: BodyInit | null, headers: Record<string, string> = {}): Promise<Response> {
  return api(path, key, { method: "PATCH", headers: { ...TUS, ...OCTETS, "Upload-Offset": String(offset), ...headers }, body });
}

export function head(key: string | undefined, path: string): Promise<Response> {
  return api(path, key, { method: "HEAD", headers: TUS });
}

export async function offsetOf(key: string, path: string): Promise<number> {
  return Number((await head(key, path)).headers.get("upload-offset"));
}

/** Sends `bytes` from `from` on in PATCHes of the given sizes (the last takes the rest). */
export async function patchInPieces(key: string, path: string, bytes: Uint8Array, sizes: number[], from = 0): Promise<Response> {
  let offset = from;
  let last: Response | undefined;
  for (const size of [...sizes, bytes.byteLength]) {
    if (offset >= bytes.byteLength) break;
    const end = Math.min(offset + size, bytes.byteLength);
    last = await patch(key, path, offset, bytes.slice(offset, end));
    if (last.status !== 204) return last;
    offset = end;
  }
  return last!;
}

/** `bytes` as a stream of `chunk`-sized pieces: sent chunked, with no Content-Length. */
export function chunkedBody(bytes: Uint8Array, chunk = 256 * 1024): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunk));
      offset += chunk;
    },
  }, { highWaterMark: 0 });
}

/**
 * A request body that sends `bytes`, then breaks off with an error, as a dropped connection
 * does. `delivered` resolves once the last byte has been handed over.
 */
export function breakingBody(bytes: Uint8Array, chunk = 256 * 1024): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.error(new Error("connection reset"));
      controller.enqueue(bytes.slice(offset, offset + chunk));
      offset += chunk;
    },
  }, { highWaterMark: 0 });
}

/** A request body the test feeds by hand: what it `send`s goes out, and `end` closes it. */
export function heldBody(): { body: ReadableStream<Uint8Array>; send: (bytes: Uint8Array) => void; end: () => void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => { controller = c; } });
  return { body, send: (bytes) => controller.enqueue(bytes), end: () => controller.close() };
}

export interface TusRow {
  state: string;
  upload_offset: number;
  tail_size: number;
  lock_token: string | null;
  file_key: string | null;
  multipart_id: string | null;
  parts: string;
}

export async function uploadRow(id: string): Promise<TusRow | null> {
  return env.DB.prepare("SELECT * FROM tus_uploads WHERE id = ?").bind(id).first<TusRow>();
}

/** Polls D1 until no PATCH holds the upload (a broken-off PATCH finishes saving in waitUntil). */
export async function untilUnlocked(id: string): Promise<TusRow> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const row = await uploadRow(id);
    if (row && row.lock_token === null) return row;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`upload ${id} stayed locked`);
}

export async function tusObjects(id: string): Promise<string[]> {
  return (await env.FILES.list({ prefix: `tus/${id}/` })).objects.map((object) => object.key);
}
