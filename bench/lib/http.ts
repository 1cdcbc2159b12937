import { once } from "node:events";
import { type IncomingMessage, type Server, type ServerResponse, createServer, request } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * One block of random bytes that starts with an MP4 `ftyp` box (so uploads sniff as video/mp4),
 * repeated to make a file of any size without holding it. Its length is a multiple of 3 so that
 * the base64 of the repeated block is the repeated base64 of the block.
 */
const BLOCK = (() => {
  const block = new Uint8Array(3 * 349_525);
  crypto.getRandomValues(block.subarray(0, 65_536));
  for (let offset = 65_536; offset < block.length; offset += 65_536) block.copyWithin(offset, 0, Math.min(65_536, block.length - offset));
  block.set([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d], 0);
  return block;
})();
export const BLOCK_BYTES = BLOCK.byteLength;
const BLOCK_BASE64 = Buffer.from(BLOCK).toString("base64");

/** Writes `size` bytes of the repeated block to `sink`, waiting whenever it asks to. */
async function writeFile(sink: NodeJS.WritableStream & { write(chunk: Uint8Array): boolean }, size: number): Promise<void> {
  for (let sent = 0; sent < size; sent += BLOCK.byteLength) {
    const chunk = size - sent >= BLOCK.byteLength ? BLOCK : BLOCK.subarray(0, size - sent);
    if (!sink.write(chunk)) await once(sink, "drain");
  }
}

/** The same file as base64 text; `blocks` whole blocks only. */
async function writeBase64(sink: NodeJS.WritableStream & { write(chunk: string): boolean }, blocks: number): Promise<void> {
  for (let i = 0; i < blocks; i++) if (!sink.write(BLOCK_BASE64)) await once(sink, "drain");
}

export interface Sent {
  status: number;
  body: string;
  seconds: number;
}

/**
 * Sends `prefix`, the file (raw bytes, or base64 of `size / BLOCK_BYTES` blocks) and `suffix`
 * as one request with an exact Content-Length, as curl does; times it until the answer.
 */
export function sendFile(url: string, options: { method: string; headers?: Record<string, string>; size: number; base64?: boolean; prefix?: string; suffix?: string }): Promise<Sent> {
  const prefix = Buffer.from(options.prefix ?? "");
  const suffix = Buffer.from(options.suffix ?? "");
  const fileBytes = options.base64 ? (options.size / BLOCK.byteLength) * BLOCK_BASE64.length : options.size;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: options.method, headers: { ...options.headers, "content-length": String(prefix.byteLength + fileBytes + suffix.byteLength) } }, (response) => {
      collect(response).then((body) => resolve({ status: response.statusCode ?? 0, body, seconds: (performance.now() - started) / 1000 }), reject);
    });
    outgoing.on("error", reject);
    (async () => {
      outgoing.write(prefix);
      if (options.base64) await writeBase64(outgoing, options.size / BLOCK.byteLength);
      else await writeFile(outgoing, options.size);
      outgoing.end(suffix);
    })().catch(reject);
  });
}

export async function sendJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Sent> {
  const started = performance.now();
  const response = await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.text(), seconds: (performance.now() - started) / 1000 };
}

async function collect(response: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** A local origin for URL uploads: `GET /file/<size>` answers the file with its Content-Length. */
export async function startOrigin(): Promise<{ url: (size: number) => string; close: () => Promise<void> }> {
  const server: Server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const size = Number(/^\/file\/(\d+)$/.exec(incoming.url ?? "")?.[1]);
    if (!Number.isSafeInteger(size)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": "video/mp4", "content-length": String(size) });
    writeFile(response, size).then(() => response.end(), () => response.destroy());
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: (size) => `http://127.0.0.1:${port}/file/${size}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
