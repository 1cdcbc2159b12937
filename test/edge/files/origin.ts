/**
 * The remote origin the URL-upload tests download from: a real Node HTTP server started by
 * `test/helpers/origin-server.ts` (a vitest globalSetup, so it runs in Node, where the
 * workerd pool cannot listen). Both sides import this module, so the bytes the server sends
 * and the bytes the tests expect come from the same function. No runtime-specific imports.
 */
declare module "vitest" {
  export interface ProvidedContext {
    /** Port of the origin server on 127.0.0.1. */
    originPort: number;
  }
}

/** Offsets 0-11 form an MP4 `ftyp` box, so the content sniffs as video/mp4. */
const MP4_HEADER = [0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d];

/** Bytes `[offset, offset + length)` of the endless deterministic test file. */
export function patternBytes(offset: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i++) bytes[i] = ((offset + i) * 31 + 7) & 0xff;
  for (let i = offset; i < Math.min(offset + length, MP4_HEADER.length); i++) bytes[i - offset] = MP4_HEADER[i]!;
  return bytes;
}

export const HTML_PAGE = "<!doctype html><html><body><script>alert(document.cookie)</script></body></html>";

/**
 * The origin's routes. `size` is in bytes.
 * - `/file/<size>`: the pattern file with Content-Length and `Content-Type: video/mp4`.
 * - `/chunked/<size>`: the same bytes without Content-Length (chunked transfer).
 * - `/declared/<size>`: claims Content-Length `size` but closes after 1 KiB.
 * - `/html`: an HTML page that claims to be video/mp4.
 * - `/status/<code>`: answers that status with a short body.
 * - `/typed?type=<type>&body=<base64>`: answers the decoded bytes declared as `type`.
 * - `/redirect?to=<url>`: 302 to `url`.
 * - `/hang`: accepts the request and never answers.
 * - `/stall`: sends headers and 1 KiB of body, then nothing more.
 * - `/trickle/<kib>?every=<ms>&stop=<k>`: `kib` KiB, one KiB every `ms`; with `stop`, nothing after `k` KiB.
 */
export const originPaths = {
  file: (size: number) => `/file/${size}`,
  chunked: (size: number) => `/chunked/${size}`,
  declared: (size: number) => `/declared/${size}`,
  html: () => "/html",
  status: (code: number) => `/status/${code}`,
  typed: (type: string, base64: string) => `/typed?type=${encodeURIComponent(type)}&body=${encodeURIComponent(base64)}`,
  redirect: (to: string) => `/redirect?to=${encodeURIComponent(to)}`,
  hang: () => "/hang",
  trickle: (kib: number, everyMs: number, stopAfter?: number) => `/trickle/${kib}?every=${everyMs}${stopAfter === undefined ? "" : `&stop=${stopAfter}`}`,
  stall: () => "/stall",
  /** A webhook receiver recording under `name`; `status` is its answer, `location` that of a 3xx. */
  hook: (name: string, status = 200, location?: string) => `/hook/${name}?status=${status}${location ? `&location=${encodeURIComponent(location)}` : ""}`,
  /** What `hook(name)` received, as JSON. */
  hookLog: (name: string) => `/hook-log/${name}`,
};

/** Chunk size the origin writes the pattern in. */
export const ORIGIN_CHUNK = 64 * 1024;
