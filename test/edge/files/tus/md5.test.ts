import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ResumableMd5 } from "../../../../edge/files/tus/md5";
import { md5Hex } from "../../helpers";

describe("ResumableMd5", () => {
  it("gives the MD5 of the whole input however it is split and saved between the pieces", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 0, maxLength: 4096 }), fc.array(fc.nat(4096), { maxLength: 6 }), async (bytes, cuts) => {
        const points = [...new Set(cuts.map((cut) => cut % (bytes.byteLength + 1)))].sort((a, b) => a - b);
        let state: string | undefined;
        let start = 0;
        for (const end of [...points, bytes.byteLength]) {
          const md5 = new ResumableMd5(state);
          md5.update(bytes.subarray(start, end));
          state = md5.state();
          start = end;
        }
        expect(new ResumableMd5(state).hex()).toBe(await md5Hex(bytes));
      }),
      { numRuns: 200 },
    );
  });

  it("hashes views into a larger buffer by their own bytes only", async () => {
    const buffer = new Uint8Array(1000).map((_, i) => i & 0xff);
    const md5 = new ResumableMd5();
    md5.update(buffer.subarray(10, 500));
    expect(md5.hex()).toBe(await md5Hex(buffer.slice(10, 500)));
  });

  it("refuses a saved state that is not one", () => {
    expect(() => new ResumableMd5(JSON.stringify({ buff: "", length: -1, hash: [1, 2, 3, 4] }))).toThrow();
    expect(() => new ResumableMd5("{}")).toThrow();
  });
});
