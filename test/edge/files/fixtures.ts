import { toHex } from "../../../shared/encoding";
import { env } from "cloudflare:test";
import { inject } from "vitest";
import { patternBytes } from "./origin";

/** A URL on the Node origin server the edge project's globalSetup started. */
export function originUrl(path: string): string {
  return `http://127.0.0.1:${inject("originPort")}${path}`;
}

/** Everything stored for a user: R2 objects under its prefix and its D1 file rows. */
export async function storedFor(userId: string): Promise<{ objects: string[]; rows: string[] }> {
  const listing = await env.FILES.list({ prefix: `uploads/${userId}/` });
  const { results } = await env.DB.prepare("SELECT key FROM files WHERE user_id = ?").bind(userId).all<{ key: string }>();
  return { objects: listing.objects.map((object) => object.key), rows: results.map((row) => row.key) };
}

export interface StreamedBody {
  body: ReadableStream<Uint8Array>;
  /** Resolves to the MD5 (hex) of the file bytes once the body has been fully read. */
  md5: Promise<string>;
  /** How many file bytes the reader has pulled so far. */
  pulled: () => number;
}

const CHUNK = 64 * 1024;

/**
 * The pattern file of `size` bytes as a stream produced on demand, so a 110 MB upload never
 * exists in the test's memory. `prefix`/`suffix` wrap it (a multipart envelope).
 */
export function streamedFile(size: number, prefix = "", suffix = ""): StreamedBody {
  const encoder = new TextEncoder();
  const digest = new crypto.DigestStream("MD5");
  const digestWriter = digest.getWriter();
  let offset = -1;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (offset === -1) {
        offset = 0;
        if (prefix) return controller.enqueue(encoder.encode(prefix));
      }
      if (offset < size) {
        const chunk = patternBytes(offset, Math.min(CHUNK, size - offset));
        offset += chunk.byteLength;
        await digestWriter.write(chunk.slice());
        return controller.enqueue(chunk);
      }
      if (suffix) controller.enqueue(encoder.encode(suffix));
      await digestWriter.close();
      controller.close();
    },
  }, { highWaterMark: 0 });
  const md5 = digest.digest.then(hex);
  md5.catch(() => {});
  return { body, md5, pulled: () => Math.max(offset, 0) };
}

/** A streamed multipart/form-data body whose part `file` holds `size` pattern bytes. */
export function streamedMultipart(size: number, part = { filename: "big.mp4", type: "video/mp4" }): StreamedBody & { contentType: string } {
  const boundary = `----ffedge${crypto.randomUUID()}`;
  const prefix = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${part.filename}"\r\nContent-Type: ${part.type}\r\n\r\n`;
  return { ...streamedFile(size, prefix, `\r\n--${boundary}--\r\n`), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** MD5 (hex) of everything a stream yields, read as it arrives. */
export async function md5OfStream(stream: ReadableStream<Uint8Array>): Promise<{ md5: string; size: number }> {
  const digest = new crypto.DigestStream("MD5");
  let size = 0;
  await stream.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      size += chunk.byteLength;
      controller.enqueue(chunk);
    },
  })).pipeTo(digest);
  return { md5: hex(await digest.digest), size };
}

export function hex(buffer: ArrayBuffer): string {
  return toHex(buffer);
}

/** Writes an object and its row directly, as if uploaded earlier, with the given expiry. */
export async function seedFile(userId: string, options: { expiresAt: Date; body?: string; contentType?: string; name?: string }): Promise<string> {
  const key = `uploads/${userId}/${options.name ?? crypto.randomUUID().replaceAll("-", "")}.txt`;
  const contentType = options.contentType ?? "text/plain";
  const expiresAt = options.expiresAt.toISOString();
  await env.FILES.put(key, options.body ?? "seeded", { httpMetadata: { contentType }, customMetadata: { user_id: userId, expires_at: expiresAt } });
  await env.DB.prepare(
    "INSERT INTO files (key, user_id, kind, task_id, size, md5, content_type, original_name, created_at, expires_at) VALUES (?, ?, 'upload', NULL, ?, NULL, ?, NULL, ?, ?)",
  )
    .bind(key, userId, (options.body ?? "seeded").length, contentType, new Date().toISOString(), expiresAt)
    .run();
  return key;
}
