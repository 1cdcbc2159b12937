import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JobFailure } from "../../../transcoder/jobs/failure";
import { checkCommand } from "../../../shared/ffmpeg/index";
import { checkExpected, collectOutputs, contentTypeOf, declaredOutputs, inCommandOrder, onlyDeclared, sequencePattern } from "../../../transcoder/jobs/outputs";

let dir: string;
beforeEach(async () => void (dir = await mkdtemp(path.join(os.tmpdir(), "ffedge-out-"))));
afterEach(async () => rm(dir, { recursive: true, force: true }));

const limits = { maxFiles: 10, maxBytes: 1000, maxFileBytes: 1000 };

describe("collectOutputs", () => {
  it("collects only regular files directly in out/, sorted, never symlinks or directories", async () => {
    await writeFile(path.join(dir, "b.mp4"), "bbbb");
    await writeFile(path.join(dir, "a.mp4"), "aa");
    await symlink("/etc/passwd", path.join(dir, "passwd.mp4"));
    await mkdir(path.join(dir, "sub.mp4"));
    await writeFile(path.join(dir, "sub.mp4", "inner.mp4"), "x");
    const files = await collectOutputs(dir, limits);
    expect(files.map(({ filename, size }) => ({ filename, size }))).toEqual([{ filename: "a.mp4", size: 2 }, { filename: "b.mp4", size: 4 }]);
  });

  it("throws OUTPUT_LIMIT_EXCEEDED past the file count, the byte total or the size of one file", async () => {
    for (let i = 0; i < 3; i++) await writeFile(path.join(dir, `s${i}.ts`), "x".repeat(400));
    await expect(collectOutputs(dir, { maxFiles: 2, maxBytes: 10_000, maxFileBytes: 10_000 })).rejects.toMatchObject({ code: "OUTPUT_LIMIT_EXCEEDED" });
    await expect(collectOutputs(dir, { maxFiles: 10, maxBytes: 1000, maxFileBytes: 1000 })).rejects.toMatchObject({ code: "OUTPUT_LIMIT_EXCEEDED" });
    await expect(collectOutputs(dir, { maxFiles: 10, maxBytes: 10_000, maxFileBytes: 399 })).rejects.toMatchObject({ code: "OUTPUT_LIMIT_EXCEEDED", message: expect.stringContaining("for one file") });
    await expect(collectOutputs(dir, { maxFiles: 3, maxBytes: 1200, maxFileBytes: 400 })).resolves.toHaveLength(3);
  });
});

describe("checkExpected", () => {
  const files = ["out.mp4", "seg_000.ts", "seg_001.ts", "100%.png"].map((filename) => ({ filename, path: "", size: 1 }));

  it("accepts names present and patterns with at least one match", () => {
    expect(() => checkExpected(["out.mp4", "seg_%03d.ts", "100%%.png"], files)).not.toThrow();
  });

  it.each(["missing.mp4", "thumb_%03d.jpg", "seg_%03d.mp4"])("throws OUTPUT_MISSING for %s", (name) => {
    expect(() => checkExpected([name], files)).toThrow(JobFailure);
    expect(() => checkExpected([name], files)).toThrow(expect.objectContaining({ code: "OUTPUT_MISSING" }));
  });
});

describe("sequencePattern", () => {
  it.each([
    ["thumb_%03d.jpg", "thumb_001.jpg", true],
    ["thumb_%03d.jpg", "thumb_1234.jpg", true],
    ["thumb_%03d.jpg", "thumb_abc.jpg", false],
    ["seg%d.ts", "seg7.ts", true],
    ["seg%d.ts", "seg7xts", false],
  ])("%s matches %s: %s", (pattern, name, matches) => expect(sequencePattern(pattern)!.test(name)).toBe(matches));

  it("is undefined for plain names", () => expect(sequencePattern("out.mp4")).toBeUndefined());
});

describe("contentTypeOf", () => {
  it.each([["a.mp4", "video/mp4"], ["a.M3U8", "application/vnd.apple.mpegurl"], ["a.jpg", "image/jpeg"], ["a.weird", "application/octet-stream"]])("%s is %s", (name, type) => {
    expect(contentTypeOf(name)).toBe(type);
  });
});

describe("inCommandOrder", () => {
  const file = (filename: string) => ({ filename, path: `/out/${filename}`, size: 1 });

  it("lists outputs in the order the command names them, a pattern's files and extras by name", () => {
    const files = ["audio.mp3", "index.m3u8", "seg_001.ts", "seg_000.ts", "small.mp4", "thumb_02.jpg", "thumb_01.jpg"].map(file);
    const ordered = inCommandOrder(["small.mp4", "thumb_%02d.jpg", "audio.mp3", "index.m3u8"], files).map((f) => f.filename);
    expect(ordered).toEqual(["small.mp4", "thumb_01.jpg", "thumb_02.jpg", "audio.mp3", "index.m3u8", "seg_000.ts", "seg_001.ts"]);
  });
});

describe("declaredOutputs and onlyDeclared", () => {
  const published = (command: string, names: string[]) =>
    onlyDeclared(declaredOutputs(checkCommand(command)), names.map((filename) => ({ filename, path: `/out/${filename}`, size: 1 }))).map((file) => file.filename);

  it("publishes the named outputs and never files ffmpeg wrote on its own (two-pass logs)", () => {
    const names = ["out.mp4", "ffmpeg2pass-0.log", "ffmpeg2pass-0.log.mbtree", "x264_2pass.log", "x264_2pass.log.temp"];
    expect(published("ffmpeg -i https://example.com/a.mp4 -c:v libx264 -flags +pass1 out.mp4", names)).toEqual(["out.mp4"]);
  });

  it("matches sequence patterns to their files", () => {
    expect(published("ffmpeg -i https://example.com/a.mp4 -f segment -segment_time 1 seg_%03d.ts", ["seg_000.ts", "seg_001.ts", "seg_x.ts", "other.ts"])).toEqual(["seg_000.ts", "seg_001.ts"]);
  });

  it("publishes an HLS playlist with its default segments, or the segments it names", () => {
    expect(published("ffmpeg -i https://example.com/a.mp4 -f hls -hls_time 1 index.m3u8", ["index.m3u8", "index0.ts", "index1.ts", "stray.ts"])).toEqual(["index.m3u8", "index0.ts", "index1.ts"]);
    expect(published("ffmpeg -i https://example.com/a.mp4 -hls_segment_filename part_%02d.ts index.m3u8", ["index.m3u8", "part_00.ts", "index0.ts"])).toEqual(["index.m3u8", "part_00.ts"]);
    expect(published("ffmpeg -i https://example.com/a.mp4 -f hls -hls_segment_type fmp4 index.m3u8", ["index.m3u8", "index0.m4s", "init.mp4"])).toEqual(["index.m3u8", "index0.m4s", "init.mp4"]);
  });

  it("publishes a DASH manifest with the segments the dash muxer names by default, and nothing else", () => {
    const written = ["manifest.mpd", "init-stream0.m4s", "init-stream1.webm", "chunk-stream0-00001.m4s", "chunk-stream1-00012.webm", "manifest.mpd.tmp", "init-stream0.mp4", "stray.m4s"];
    expect(published("ffmpeg -i https://example.com/a.mp4 manifest.mpd", written)).toEqual(written.slice(0, 5));
    expect(published("ffmpeg -i https://example.com/a.mp4 -f mp4 out.mp4", ["out.mp4", "init-stream0.m4s"])).toEqual(["out.mp4"]);
  });

  it("gives DASH manifests and their segments their types", () => {
    expect([contentTypeOf("manifest.mpd"), contentTypeOf("chunk-stream0-00001.m4s"), contentTypeOf("out.avi"), contentTypeOf("out.flv")]).toEqual(["application/dash+xml", "video/iso.segment", "video/x-msvideo", "video/x-flv"]);
  });
});
