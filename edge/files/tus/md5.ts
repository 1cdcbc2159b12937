import SparkMD5 from "spark-md5";
import { z } from "zod";

/** spark-md5's ArrayBuffer state: up to 63 pending bytes as a binary string, the byte count, the four words. */
const StateSchema = z.object({ buff: z.string().max(64), length: z.number().int().nonnegative(), hash: z.array(z.number().int()).length(4) });

/**
 * An MD5 whose intermediate state can be saved after one request and resumed in the next, so
 * a file sent over many PATCHes still gets the MD5 of all its bytes (R2 multipart ETags are
 * not MD5s). Web Crypto cannot export a digest's state, and hash-wasm, which can, needs to
 * compile WebAssembly at run time, which workerd refuses; spark-md5 is plain JavaScript.
 */
export class ResumableMd5 {
  private readonly hasher = new SparkMD5.ArrayBuffer();

  /** Resumes from `saved` (a `state()` string), or starts empty. */
  constructor(saved?: string | null) {
    if (!saved) return;
    // @types/spark-md5 types `buff` as a Uint8Array, but the ArrayBuffer flavour exchanges a string.
    this.hasher.setState(StateSchema.parse(JSON.parse(saved)) as unknown as SparkMD5.State);
  }

  update(bytes: Uint8Array): void {
    if (bytes.byteLength === 0) return;
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
    this.hasher.append(whole ? (bytes.buffer as ArrayBuffer) : bytes.slice().buffer);
  }

  /** The state after every byte so far, as a JSON string for D1. */
  state(): string {
    return JSON.stringify(this.hasher.getState());
  }

  /** The digest, lowercase hex. The hasher is spent afterwards. */
  hex(): string {
    return this.hasher.end();
  }
}
