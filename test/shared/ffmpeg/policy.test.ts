import { describe, expect, it } from "vitest";
import { checkCommand, DEFAULT_LIMITS } from "../../../shared/ffmpeg/index";
import { parseDuration, parseFrameRate, parseQuantity, parseVideoSize } from "../../../shared/ffmpeg/values";
import { argvOf, IN, refusalOf } from "./helpers";

const withInput = (tail: string) => `ffmpeg -i ${IN} ${tail}`;

describe("checkCommand", () => {
  it("returns the parsed command", () => {
    expect(checkCommand(withInput("-c:v libx264 out.mp4"))).toEqual({
      globals: [],
      inputs: [{ url: IN, options: [] }],
      outputs: [{ filename: "out.mp4", options: [{ name: "c:v", base: "c", value: "libx264" }] }],
    });
  });

  it("explains a refusal in words and names the token", () => {
    const refusal = refusalOf(withInput("-c:v h264_nvenc out.mp4"));
    expect(refusal).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", status: 400, token: "h264_nvenc" });
    expect(refusal.detail).toContain("'-c:v'");
    expect(refusal.detail).toContain("'h264_nvenc'");
  });

  it("uses caps given by the caller instead of the defaults", () => {
    expect(refusalOf(withInput("-t 120 out.mp4"), { maxDurationSeconds: 60 })).toMatchObject({ code: "LIMIT_EXCEEDED", token: "120" });
    expect(refusalOf(`ffmpeg -i ${IN} -i ${IN} out.mp4`, { maxInputs: 1 })).toMatchObject({ code: "LIMIT_EXCEEDED" });
    expect(argvOf(withInput("-threads 32 out.mp4"), { maxThreads: 32 })).toContain("32");
  });

  it("has sensible default caps", () => {
    expect(DEFAULT_LIMITS).toMatchObject({ maxInputs: 10, maxOutputs: 20, maxDurationSeconds: 10_800, maxFrames: 500_000, maxWidth: 8192, maxHeight: 8192, maxThreads: 16 });
  });

  describe("option values", () => {
    it.each([
      "-c:v libx264", "-c:v libx265", "-c:v libvpx-vp9", "-c:v libaom-av1", "-c:v libsvtav1", "-c:a libopus", "-c:a libmp3lame",
      "-c:a flac", "-c:a pcm_s16le", "-c copy", "-codec:a:0 aac", "-vcodec mjpeg", "-acodec aac", "-c:s mov_text",
      "-b:v 2500k", "-b:a:0 128k", "-maxrate 2M -bufsize 4M", "-crf 23", "-qp 0", "-preset veryfast", "-tune film", "-profile:v high",
      "-level 4.1", "-g 48", "-r 30000/1001", "-r ntsc", "-s hd720", "-pix_fmt yuv420p", "-aspect 16:9", "-movflags frag_keyframe+empty_moov",
      "-ar 48000", "-ac 2", "-map 0:v:0", "-map 0:a?", "-map -0:s", "-metadata title=x", "-metadata:s:a:0 language=eng",
      "-disposition:a:0 default", "-t 00:01:30.5", "-to 90", "-ss 500ms", "-frames:v 10", "-threads auto", "-tag:v hvc1",
      "-force_key_frames 'expr:gte(t,n_forced*2)'", "-bsf:v h264_mp4toannexb", "-fps_mode vfr", "-strict -2", "-fs 10M",
    ])("accepts %s", (options) => {
      expect(() => checkCommand(withInput(`${options} out.mp4`))).not.toThrow();
    });

    it.each([
      ["-c:v libx264 -i", "libx264"],
      ["-f mp4 -c:v h264_cuvid -i", "h264_cuvid"],
    ])("checks a codec before -i against the decoders: %s", (options, token) => {
      expect(refusalOf(`ffmpeg ${options} ${IN} out.mp4`)).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token });
    });

    it.each([
      ["-c:v frobnicate", "frobnicate"],
      ["-f mp4x", "mp4x"],
      ["-pix_fmt /etc/passwd", "/etc/passwd"],
      ["-preset ../x", "../x"],
      ["-map 3:v", "3:v"],
      ["-map 0:v,1:v", "0:v,1:v"],
      ["-metadata title", "title"],
      ["-crf 80", "80"],
      ["-t five", "five"],
      ["-ss x", "x"],
      ["-r -5", "-5"],
      ["-bsf:v noise", "noise"],
      ["-movflags '+faststart;x'", "+faststart;x"],
      ["-hls_flags +append_list", "+append_list"],
      ["-metadata 'comment=a\nb'", "comment=a\nb"],
      ["-loglevel debug", "debug"],
      ["-x264-params keyint=48:pools=9", "keyint=48:pools=9"],
    ])("refuses %s", (options, token) => {
      expect(refusalOf(withInput(`${options} out.mp4`))).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token });
    });

    it("refuses -sseof with a positive time", () => {
      expect(refusalOf(`ffmpeg -sseof 5 -i ${IN} out.mp4`)).toMatchObject({ code: "OPTION_VALUE_NOT_ALLOWED", token: "5" });
    });
  });

  describe("filter graphs", () => {
    it.each([
      "scale=640:-2", "scale=w=iw/2:h=-1:flags=lanczos", "scale=hd720", "crop=in_w/2:in_h/2", "fps=fps=1/5", "setpts=0.5*PTS",
      "select='not(mod(n\\,10))'", "drawtext=text='%{pts\\:hms}':x=10:y=10", "eq=brightness=0.1", "format=yuv420p",
      "tpad=stop_mode=clone:stop_duration=1", "loop=loop=2:size=10:start=0", "zoompan=z=1.1:d=25:s=640x360", "tile=3x3:margin=2",
      "sws_flags=lanczos;scale=320:-2",
    ])("accepts -vf %s", (graph) => {
      expect(() => checkCommand(withInput(`-vf "${graph}" out.mp4`))).not.toThrow();
    });

    it("refuses a graph it cannot read", () => {
      expect(refusalOf(withInput("-vf 'scale=2:2,' out.mp4"))).toMatchObject({ code: "FILTER_GRAPH_INVALID", token: "scale=2:2," });
    });

    it("refuses a bare argument after a key=value one, as ffmpeg does", () => {
      expect(refusalOf(withInput("-vf scale=w=2:2 out.mp4"))).toMatchObject({ code: "FILTER_GRAPH_INVALID", token: "scale" });
    });

    it("refuses bare arguments past the ones it can name on a filter with rules", () => {
      expect(refusalOf(withInput("-vf drawtext=x:y:z:w out.mp4"))).toMatchObject({ code: "FILTER_NOT_ALLOWED", token: "drawtext" });
    });
  });

  describe("output names", () => {
    it.each(["out.mp4", "OUT.MP4", "thumb_%03d.jpg", "%04d.png", "stream_%v.m3u8", "a-b_c.d.mkv", "x.webm", "x.avif", "s.vtt"])("accepts %s", (name) => {
      expect(argvOf(withInput(name)).at(-1)).toBe(`/job/out/${name}`);
    });

    it("accepts names up to 128 characters", () => {
      const name = `${"a".repeat(124)}.mp4`;
      expect(argvOf(withInput(name)).at(-1)).toBe(`/job/out/${name}`);
      expect(refusalOf(withInput(`a${name}`))).toMatchObject({ code: "OUTPUT_NOT_ALLOWED" });
    });
  });
});

describe("value parsers", () => {
  it.each([
    ["90", 90], ["1.5", 1.5], ["-2", -2], ["500ms", 0.5], ["250000us", 0.25], ["3s", 3], ["01:30", 90], ["1:00:00", 3600],
    ["00:01:30.5", 90.5], ["-00:00:05", -5], ["5.", 5],
  ])("reads the duration %s", (text, seconds) => {
    expect(parseDuration(text)).toBeCloseTo(seconds);
  });

  it.each(["", "x", "1:2:3:4", "1:60", "1e3", "0x10", "1.5.5", "--1"])("does not read %j as a duration", (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });

  it.each([
    ["1280x720", { width: 1280, height: 720 }], ["hd1080", { width: 1920, height: 1080 }], ["4k", { width: 4096, height: 2160 }],
  ])("reads the size %s", (text, size) => {
    expect(parseVideoSize(text)).toEqual(size);
  });

  it.each(["0x0", "-1x5", "640", "iw*2", "0x7fff", "1e4x100", "640x480junk"])("does not read %j as a size", (text) => {
    expect(parseVideoSize(text)).toBeUndefined();
  });

  it.each([["640*480", 640, 480], ["640:480", 640, 480], ["+99999x+99999", 99999, 99999], [" 64x 48", 64, 48]])(
    "reads %j as av_parse_video_size does (any one separator, strtol numbers)",
    (text, width, height) => {
      expect(parseVideoSize(text)).toEqual({ width, height });
    },
  );

  it.each([["25", 25], ["30000/1001", 29.97], ["24:1", 24], ["ntsc", 29.97], ["film", 24]])("reads the frame rate %s", (text, rate) => {
    expect(parseFrameRate(text)).toBeCloseTo(rate, 2);
  });

  it.each([["128k", 128_000], ["2M", 2_000_000], ["1.5M", 1_500_000], ["1Ki", 1024], ["1KiB", 8192], ["300", 300]])("reads the quantity %s", (text, value) => {
    expect(parseQuantity(text)).toBe(value);
  });
});
