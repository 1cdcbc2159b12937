import { describe, expect, it } from "vitest";
import { parseByteCount, parseMetadata } from "../../../../edge/files/tus/protocol";
import { metadataHeader } from "./tus-client";

describe("parseMetadata", () => {
  it("decodes tus-js-client's filename and filetype, UTF-8 included, and keeps the header as sent", () => {
    const header = metadataHeader({ filename: "Café ☕.mp4", filetype: "video/mp4", relativePath: "null" });
    expect(parseMetadata(header)).toEqual({ raw: header, filename: "Café ☕.mp4", filetype: "video/mp4" });
  });

  it("falls back to Uppy's name and type", () => {
    expect(parseMetadata(metadataHeader({ name: "a.wav", type: "audio/wav" }))).toMatchObject({ filename: "a.wav", filetype: "audio/wav" });
  });

  it("accepts a key without a value and an absent header", () => {
    expect(parseMetadata("is_confidential")).toEqual({ raw: "is_confidential", filename: undefined, filetype: undefined });
    expect(parseMetadata(undefined)).toEqual({ raw: null });
    expect(parseMetadata("  ")).toEqual({ raw: null });
  });

  it("refuses values that are not base64, extra fields, repeated keys and oversized headers", () => {
    for (const header of ["filename a$b", "filename YQ== extra", "filename YQ==,filename Yg==", ",", `filename ${"QUFB".repeat(1100)}`]) {
      expect(() => parseMetadata(header), header.slice(0, 40)).toThrow(/Upload-Metadata/);
    }
  });
});

describe("parseByteCount", () => {
  it("reads non-negative decimal integers only", () => {
    expect(parseByteCount("Upload-Length", "0")).toBe(0);
    expect(parseByteCount("Upload-Length", " 1073741824 ")).toBe(1073741824);
    for (const value of [undefined, "", "-1", "1.5", "1e6", "0x10", "12345678901234567"]) {
      expect(() => parseByteCount("Upload-Offset", value), String(value)).toThrow(/Upload-Offset/);
    }
  });
});
