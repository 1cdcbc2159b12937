import { describe, expect, it } from "vitest";
import { FORMAT_WHITELIST, type MediaProbe, checkInput, parseProbe, timingOf } from "../../../transcoder/ffmpeg/probe";

const probe = (format_name: string, streams: MediaProbe["streams"] = [{ codec_type: "video", width: 640, height: 360, avg_frame_rate: "25/1" }], duration = "12.5"): MediaProbe => ({
  format: { format_name, duration },
  streams,
});

describe("checkInput", () => {
  it.each(["mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "png_pipe", "wav", "srt"])("accepts %s", (format) => {
    expect(() => checkInput(probe(format), "Input 1", 8192 * 8192)).not.toThrow();
  });

  it.each(["hls", "concat", "tty", "lavfi", "image2", "sdp", "dash", "mpjpeg"])("refuses %s with INPUT_FORMAT_NOT_ALLOWED", (format) => {
    expect(() => checkInput(probe(format), "Input 1", 8192 * 8192)).toThrow(expect.objectContaining({ code: "INPUT_FORMAT_NOT_ALLOWED" }));
  });

  it("refuses a file without streams", () => {
    expect(() => checkInput(probe("mov,mp4,m4a,3gp,3g2,mj2", []), "Input 1", 100)).toThrow(expect.objectContaining({ code: "INPUT_FORMAT_NOT_ALLOWED" }));
  });

  it("refuses a picture that declares more pixels than allowed (a decompression bomb)", () => {
    const bomb = probe("png_pipe", [{ codec_type: "video", width: 64250, height: 64250 }]);
    expect(() => checkInput(bomb, "Input 1", 8192 * 8192)).toThrow(/64250×64250/);
  });

  it("passes ffmpeg the same list it checks", () => {
    expect(FORMAT_WHITELIST.split(",")).toContain("mp4");
    expect(FORMAT_WHITELIST).not.toMatch(/\b(hls|concat|tty|lavfi|image2)\b/);
  });
});

describe("parseProbe and timingOf", () => {
  it("reads duration and frame rate", () => {
    const parsed = parseProbe(JSON.stringify(probe("matroska,webm", [{ codec_type: "audio" }, { codec_type: "video", avg_frame_rate: "0/0", r_frame_rate: "30000/1001" }])));
    expect(parsed).toBeDefined();
    const timing = timingOf(parsed!);
    expect(timing.durationSeconds).toBe(12.5);
    expect(timing.frameRate).toBeCloseTo(29.97, 2);
  });

  it("is undefined for anything that is not ffprobe's JSON", () => {
    expect(parseProbe("not json")).toBeUndefined();
    expect(parseProbe(JSON.stringify({ streams: [] }))).toBeUndefined();
  });
});
