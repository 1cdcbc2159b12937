import { describe, expect, it } from "vitest";
import { checkCommand } from "../../../shared/ffmpeg/index";
import { EXTENSION_MUXERS, MUXERS, MUXER_EXTENSIONS, OUTPUT_EXTENSIONS } from "../../../shared/ffmpeg/formats";
import { argvOf, IN, refusalOf } from "./helpers";

const withInput = (tail: string) => `ffmpeg -i ${IN} ${tail}`;

describe("output containers", () => {
  it.each([
    ["out.avi", "avi"], ["out.flv", "flv"], ["out.mkv", "matroska"], ["out.mov", "mov"], ["out.webm", "webm"], ["out.ogg", "ogg"],
    ["out.oga", "oga"], ["out.opus", "opus"], ["out.wav", "wav"], ["out.flac", "flac"], ["out.m4a", "ipod"], ["out.aac", "adts"],
    ["out.mp3", "mp3"], ["out.gif", "gif"], ["out.webp", "webp"], ["thumb_%03d.png", "image2"], ["thumb_%03d.jpg", "image2"],
    ["out.ts", "mpegts"], ["index.m3u8", "hls"], ["manifest.mpd", "dash"],
  ])("accepts %s, which ffmpeg writes with the allowed muxer %s", (name, muxer) => {
    expect(argvOf(withInput(name)).at(-1)).toBe(`/job/out/${name}`);
    expect(EXTENSION_MUXERS[name.split(".").pop()!]).toBe(muxer);
    expect(MUXERS.has(muxer)).toBe(true);
  });

  it.each([
    ["-f avi out.avi"], ["-f flv out.flv"], ["-f matroska out.mkv"], ["-f matroska out.mka"], ["-f mov out.mov"], ["-f mp4 seg.m4s"],
    ["-f ogg out.opus"], ["-f adts out.aac"], ["-f image2 thumb_%03d.jpg"], ["-f mpegts out.ts"], ["-f hls index.m3u8"], ["-f dash manifest.mpd"],
    ["-f segment -segment_format avi part_%03d.avi"], ["-f segment part_%03d.flv"],
  ])("accepts %s: the forced muxer writes that extension", (tail) => {
    expect(() => checkCommand(withInput(tail))).not.toThrow();
  });

  it("gives every muxer a -f may force the extensions it writes, all of them allowed output extensions", () => {
    for (const [muxer, extensions] of Object.entries(MUXER_EXTENSIONS)) {
      expect(extensions.length, muxer).toBeGreaterThan(0);
      for (const extension of extensions) expect(OUTPUT_EXTENSIONS.has(extension), `${muxer} .${extension}`).toBe(true);
    }
    for (const [extension, muxer] of Object.entries(EXTENSION_MUXERS)) expect(MUXER_EXTENSIONS[muxer], extension).toContain(extension);
  });

  it.each([
    ["-f avi out.mp4", "out.mp4", "'-f avi'"],
    ["-f webvtt out.mp4", "out.mp4", "'-f webvtt'"],
    ["-f dash out.mp4", "out.mp4", "'-f dash'"],
    ["-f hls out.ts", "out.ts", "'-f hls'"],
    ["-f flv out.avi", "out.avi", "'-f flv'"],
    ["-f segment -segment_format mpegts part_%03d.mp4", "part_%03d.mp4", "'-segment_format mpegts'"],
    ["-f segment part_%03d.m3u8", "part_%03d.m3u8", "single-file segments"],
  ])("refuses %s: the name would say another format than the bytes", (tail, token, named) => {
    const refusal = refusalOf(withInput(tail));
    expect(refusal).toMatchObject({ code: "OUTPUT_NOT_ALLOWED", status: 400, token });
    expect(refusal.detail).toContain(named);
  });

  it.each(["out.mxf", "out.3gp", "out.mpd.txt", "out.m3u", "out.ffconcat", "out.sdp"])("still refuses %s", (name) => {
    expect(refusalOf(withInput(name))).toMatchObject({ code: "OUTPUT_NOT_ALLOWED", token: name });
  });
});

describe("DASH outputs", () => {
  it("accepts the dash muxer's own options on a manifest", () => {
    const tail = "-seg_duration 2 -use_template 1 -use_timeline 0 -dash_segment_type mp4 -adaptation_sets 'id=0,streams=v id=1,streams=a' manifest.mpd";
    expect(() => checkCommand(withInput(tail))).not.toThrow();
  });

  it.each([
    ["-init_seg_name ../x.m4s manifest.mpd", "-init_seg_name"],
    ["-media_seg_name 'seg_$Number$.m4s' manifest.mpd", "-media_seg_name"],
    ["-single_file_name one.mp4 manifest.mpd", "-single_file_name"],
    ["-hls_playlist 1 manifest.mpd", "-hls_playlist"],
    ["-utc_timing_url http://169.254.169.254/ manifest.mpd", "-utc_timing_url"],
    ["-http_user_agent x manifest.mpd", "-http_user_agent"],
  ])("refuses %s: segment names must stay predictable, and nothing is fetched", (tail, token) => {
    expect(refusalOf(withInput(tail))).toMatchObject({ code: "OPTION_NOT_ALLOWED", token });
  });

  it("names the default segment names when refusing a segment template", () => {
    expect(refusalOf(withInput("-init_seg_name x.m4s manifest.mpd")).detail).toContain("init-stream<N>.m4s");
  });

  it("refuses a second DASH manifest, whose segments would take the first one's names", () => {
    expect(refusalOf(withInput("a.mpd -f dash b.mpd"))).toMatchObject({ code: "OUTPUT_NOT_ALLOWED", token: "b.mpd" });
  });

  it.each(["init-stream0.m4s", "chunk-stream0-00001.m4s", "chunk-stream1-%05d.m4s"])("refuses another output named %s next to a DASH manifest", (name) => {
    expect(refusalOf(withInput(`manifest.mpd -c copy -f mp4 ${name}`))).toMatchObject({ code: "OUTPUT_NOT_ALLOWED", token: name });
  });

  it("allows those names without a DASH manifest", () => {
    expect(() => checkCommand(withInput("-f mp4 init-stream0.m4s"))).not.toThrow();
  });

  it("refuses a bad adaptation set", () => {
    expect(refusalOf(withInput("-adaptation_sets 'id=0,streams=v;x' manifest.mpd"))).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED" });
  });
});
