import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { essence, extensionFor, servedInline, resolveContentType } from "../../../edge/files/content-type";
import { fakeMp4 } from "../helpers";
import { HTML_PAGE } from "./origin";

const html = new TextEncoder().encode(HTML_PAGE);
const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);

describe("resolveContentType", () => {
  it("keeps a declared media type whose bytes agree", () => {
    expect(resolveContentType("video/mp4", "a.mp4", fakeMp4(64))).toBe("video/mp4");
    expect(resolveContentType("audio/mp4", "a.m4a", fakeMp4(64))).toBe("audio/mp4");
  });

  it.each(["video/mp4", "image/png", "audio/mpeg"])("refuses markup declared as %s", (declared) => {
    expect(() => resolveContentType(declared, "a", html)).toThrow(AppError);
  });

  it("refuses a PNG declared as a video", () => {
    expect(() => resolveContentType("video/mp4", "a.mp4", png)).toThrow(/image\/png/);
  });

  it("sniffs a generic declaration, but never promotes markup to its own type", () => {
    expect(resolveContentType("application/octet-stream", undefined, png)).toBe("image/png");
    expect(resolveContentType(undefined, "page.bin", html)).toBe("application/octet-stream");
  });

  it.each(["video/mp4", "audio/mpeg", "image/jpeg"])("stores plain text declared as %s as application/octet-stream", (declared) => {
    expect(resolveContentType(declared, "a", new TextEncoder().encode("hello, this is only text\r\n\tand a second line — in UTF-8"))).toBe("application/octet-stream");
    // Cut in the middle of a multi-byte character: still text.
    expect(resolveContentType(declared, "a", new TextEncoder().encode("ééé").subarray(0, 5))).toBe("application/octet-stream");
  });

  it("keeps a declared media type whose binary bytes no signature names (formats the sniffer does not know)", () => {
    const unknownBinary = new Uint8Array([0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6, 0xd9, 0x00, 0xaa]);
    expect(resolveContentType("video/x-ms-asf", "a.asf", unknownBinary)).toBe("video/x-ms-asf");
  });

  it("falls back to the file extension when the bytes say nothing", () => {
    expect(resolveContentType("", "subs.srt", new TextEncoder().encode("1\n00:00:01,000 --> 00:00:02,000\nhi"))).toBe("application/x-subrip");
  });
});

describe("content type helpers", () => {
  it.each([
    ["Text/HTML; charset=utf-8", "text/html"],
    ["video/mp4", "video/mp4"],
    ["not a type", ""],
    [undefined, ""],
  ])("essence(%j) is %j", (input, expected) => {
    expect(essence(input)).toBe(expected);
  });

  it.each(["text/html", "image/svg+xml", "IMAGE/SVG+XML", "application/xml", "text/javascript", "application/rss+xml", "text/xsl", "text/rdf", "application/rdf+xml", "text/css", "application/pdf", "application/octet-stream", "application/x-unknown", "text/vtt", "TEXT/HTML; charset=utf-8", ""])("serves %j only as an attachment", (type) => {
    expect(servedInline(type)).toBe(false);
  });

  it.each(["video/mp4", "audio/mpeg", "image/png", "image/webp", "text/plain", "Text/Plain; charset=utf-8"])("serves %s inline", (type) => {
    expect(servedInline(type)).toBe(true);
  });

  it("takes the extension from the name only when it matches the type", () => {
    expect(extensionFor("video/mp4", "clip.m4v")).toBe("m4v");
    expect(extensionFor("video/mp4", "clip.html")).toBe("mp4");
    expect(extensionFor("application/x-unknown", "x.weird")).toBe("weird");
    expect(extensionFor("application/x-unknown", "../../x")).toBe("bin");
  });
});
