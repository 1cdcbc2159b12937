import { describe, expect, it } from "vitest";
import { FORMAT_WHITELIST, isAllowedFormat, parseFormatName } from "../../../transcoder/ffmpeg/probe";

describe("isAllowedFormat", () => {
  it.each(["mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "png_pipe", "wav", "srt"])("accepts %s", (format) => {
    expect(isAllowedFormat(format)).toBe(true);
  });

  it.each(["hls", "concat", "tty", "lavfi", "image2", "sdp", "dash", "mpjpeg"])("refuses %s", (format) => {
    expect(isAllowedFormat(format)).toBe(false);
  });

  it("passes ffmpeg the same list it checks", () => {
    expect(FORMAT_WHITELIST.split(",")).toContain("mp4");
    expect(FORMAT_WHITELIST).not.toMatch(/\b(hls|concat|tty|lavfi|image2)\b/);
  });
});

describe("parseFormatName", () => {
  it("reads the demuxer name of ffprobe's format-only answer", () => {
    expect(parseFormatName(JSON.stringify({ format: { format_name: "srt" } }))).toBe("srt");
  });

  it("is undefined for anything that is not ffprobe's JSON", () => {
    expect(parseFormatName("not json")).toBeUndefined();
    expect(parseFormatName(JSON.stringify({ streams: [] }))).toBeUndefined();
  });
});
