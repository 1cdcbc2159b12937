/**
 * Case 18.8: caps on frame size, frame rate and sample rate hold for every frame a graph
 * makes, not only for what reaches an output. An intermediate frame that is downscaled before
 * the output is invisible to the runtime guard, so every filter option that sets a size, rate
 * or count is capped however it is written (by name, alias or position), and the geometry of
 * filters that combine or enlarge frames is bounded at submission.
 */
import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { checkFramesFromInputs } from "../../../shared/ffmpeg/graph-frames";
import { checkCommand, DEFAULT_LIMITS } from "../../../shared/ffmpeg/index";
import { IN, refusalOf } from "./helpers";

const withInput = (tail: string) => `ffmpeg -i ${IN} ${tail}`;
const AUDIO = "https://example.com/audio.wav";
const withAudio = (tail: string) => `ffmpeg -i ${AUDIO} ${tail}`;

describe("18.8 intermediate frames over the caps", () => {
  it.each([
    ["-vf 'sws_flags=w=12288:h=12288;scale=640:360'", "scale"],
    ["-vf 'sws_flags=bicubic:w=12288;scale=640:360'", "scale"],
    ["-filter_complex 'sws_flags=lanczos:h=99999;[0:v]format=rgb24[a]' -map [a]", "format"],
  ])("refuses scaler options hidden in the graph's sws_flags= prefix: %s", (tail) => {
    expect(refusalOf(withInput(`${tail} out.mp4`))).toMatchObject({ code: "FILTER_NOT_ALLOWED", status: 400 });
  });

  it("still accepts plain scaler flags in sws_flags=", () => {
    expect(() => checkCommand(withInput("-vf 'sws_flags=lanczos+accurate_rnd;scale=640:360' out.mp4"))).not.toThrow();
  });

  it.each([
    ["-filter_complex showwavespic=32768x4000,scale=640:-2 -frames:v 1 out.png", "showwavespic"],
    ["-filter_complex showwavespic=s=32768x4000,scale=640:-2 -frames:v 1 out.png", "showwavespic"],
    ["-filter_complex showwaves=12288x12288,scale=640:-2 out.mp4", "showwaves"],
    ["-filter_complex showwaves=640x360:line:0:1000,fps=25 out.mp4", "showwaves"],
    ["-filter_complex showwaves=r=1000,fps=25 out.mp4", "showwaves"],
    ["-filter_complex showspectrum=12288x12288,scale=640:-2 out.mp4", "showspectrum"],
    ["-filter_complex showspectrum=s=640x360:fps=1000,fps=25 out.mp4", "showspectrum"],
    ["-filter_complex showspectrumpic=12288x12288,scale=640:-2 -frames:v 1 out.png", "showspectrumpic"],
    ["-filter_complex ebur128=1:12288x12288[v][a] -map [v] -map [a] out.mp4", "ebur128"],
    ["-filter_complex ebur128=video=1:size=12288x12288[v][a] -map [v] -map [a] out.mp4", "ebur128"],
  ])("refuses sizes and rates of visualisation filters, by position or by name: %s", (tail, filter) => {
    expect(refusalOf(withAudio(tail))).toMatchObject({ code: "LIMIT_EXCEEDED", token: filter });
  });

  it.each([
    ["-af aformat=sample_rates=2000000,aresample=48000", "aformat"],
    ["-af 'aformat=r=48000|2000000,aresample=48000'", "aformat"],
    ["-af aformat=s16:2000000,aresample=48000", "aformat"],
    ["-af anullsrc=r=2000000", "anullsrc"],
  ])("refuses sample rates over the cap wherever a filter sets one: %s", (tail, filter) => {
    expect(refusalOf(withAudio(`${tail} out.wav`))).toMatchObject({ code: "LIMIT_EXCEEDED", token: filter });
  });

  it("refuses a sample rate list it cannot read", () => {
    expect(refusalOf(withAudio("-af aformat=sample_rates=48k out.wav"))).toMatchObject({ code: "FILTER_NOT_ALLOWED", token: "aformat" });
  });

  it.each([
    ["-vf pad=aspect=100,scale=640:-2", "pad"],
    ["-vf pad=w=640:h=360:aspect=1/1000,scale=640:-2", "pad"],
    ["-vf pad=640:360:0:0:black:init:100,scale=640:-2", "pad"],
    ["-vf pad=w=1920:h=1080:aspect=16/9", "pad"],
    ["-vf setsar=1/1000,pad=w=64:h=64:aspect=1,scale=640:-2", "pad"],
  ])("refuses pad's aspect, which ffmpeg divides by the frame's pixel shape (6400x64 from 64x64 at setsar=1/100): %s", (tail, filter) => {
    expect(refusalOf(withInput(`${tail} out.mp4`))).toMatchObject({ code: "FILTER_NOT_ALLOWED", token: filter });
  });

  it.each([
    "-vf 'scale=1080:1920:force_original_aspect_ratio=increase,crop=1080:1920'",
    "-vf 'scale=w=1280:h=720:force_original_aspect_ratio=increase,crop=1280:720,setsar=1'",
    "-vf 'scale=1080:1920:force_original_aspect_ratio=2:force_divisible_by=2,crop=1080:1920'",
    "-filter_complex '[0:v]scale=1080:1080:force_original_aspect_ratio=increase,crop=1080:1080[v]' -map [v]",
  ])("accepts scaling to cover a box within the caps, then cropping (its real size is judged once the input's is known): %s", (tail) => {
    expect(() => checkCommand(withInput(`${tail} out.mp4`))).not.toThrow();
  });

  it.each([
    ["-vf 'scale=12288:1920:force_original_aspect_ratio=increase,crop=1080:1920'", "LIMIT_EXCEEDED"],
    ["-vf 'scale=1080:1920:force_original_aspect_ratio=grow,crop=1080:1920'", "FILTER_NOT_ALLOWED"],
    ["-filter_complex 'color=s=8000x10:d=1,scale=1080:1920:force_original_aspect_ratio=increase,crop=1080:1920'", "LIMIT_EXCEEDED"],
  ])("refuses a cover box over the caps, an aspect fit it cannot read, and covering a known frame past the caps: %s", (tail, code) => {
    expect(refusalOf(withInput(`${tail} -frames:v 1 out.png`))).toMatchObject({ code, token: "scale" });
  });

  it.each([
    ["-vf tile=100x1:padding=1024,scale=640:-2", "tile"],
    ["-vf tile=10x10:margin=1024:padding=1024,scale=640:-2", "tile"],
    ["-vf scale=1228:1228,tile=10x10,scale=640:-2", "tile"],
    ["-vf 'scale=4096:1000,split=8[a][b][c][d][e][f][g][h];[a][b][c][d][e][f][g][h]hstack=8,scale=640:-2'", "hstack"],
    ["-filter_complex 'color=s=4096x1000:d=1,split=8[a][b][c][d][e][f][g][h];[a][b][c][d][e][f][g][h]hstack=inputs=8,scale=640:-2'", "hstack"],
    ["-filter_complex 'color=s=1000x5000:d=1,split[a][b];[a][b]vstack,scale=-2:640'", "vstack"],
    ["-filter_complex 'color=s=8192x100:d=1[a];color=s=8192x100:d=1[b];[a][b]xstack=layout=0_0|w0_0,scale=640:-2'", "xstack"],
    ["-filter_complex 'color=s=100x100:d=1[a];color=s=100x100:d=1[b];[a][b]xstack=layout=0_0|20000_0,scale=640:-2'", "xstack"],
    ["-filter_complex 'color=s=100x100:d=1,split=4[a][b][c][d];[a][b][c][d]xstack=grid=2x2:inputs=4,scale=8000:8000'", "scale"],
    ["-filter_complex color=s=6000x6000:d=1,pad=w=8000:h=ih,scale=640:-2", "pad"],
    ["-filter_complex '[a][b]hstack[big];[big]scale=640:-2;color=s=8000x100:d=1[a];color=s=8000x100:d=1[b]'", "hstack"],
  ])("refuses combining filters whose output is over the caps, even when downscaled after: %s", (tail, filter) => {
    expect(refusalOf(withInput(`${tail} -frames:v 1 out.png`))).toMatchObject({ code: "LIMIT_EXCEEDED", token: filter });
  });

  it.each([
    ["-vf split=100000[a][b]", "split"],
    ["-filter_complex hstack=inputs=100000", "hstack"],
    ["-af asplit=outputs=1e6", "asplit"],
    ["-vf select=outputs=1e6", "select"],
    ["-filter_complex concat=n=100000", "concat"],
    ["-vf thumbnail=1e7", "thumbnail"],
    ["-af asetnsamples=n=1e9", "asetnsamples"],
  ])("refuses counts of pads, held frames and samples per frame over the caps: %s", (tail, filter) => {
    expect(refusalOf(withInput(`${tail} out.mp4`))).toMatchObject({ code: "LIMIT_EXCEEDED", token: filter });
  });

  it.each([
    "-filter_complex '[0:v]scale=640:360[a];[0:v]scale=640:360[b];[a][b]hstack' -frames:v 1 out.png",
    "-vf fps=1/10,scale=320:-1,tile=4x4 -frames:v 1 out.png",
    "-filter_complex '[0:a]showwavespic=s=1280x240' -frames:v 1 out.png",
    "-filter_complex '[0:a]showwaves=s=1280x720:mode=line:rate=30[v]' -map [v] out.mp4",
    "-af 'aformat=sample_fmts=s16:sample_rates=44100|48000' out.wav",
    "-vf pad=w=1920:h=1080:aspect=0 out.mp4",
    "-vf 'scale=1280:720:force_original_aspect_ratio=decrease,pad=1280:720:(ow-iw)/2:(oh-ih)/2' out.mp4",
    "-filter_complex 'color=s=640x360:d=1[a];color=s=640x360:d=1[b];[a][b]xstack=layout=0_0|w0_0' -frames:v 1 out.png",
    "-filter_complex '[0:v]split=3[a][b][c];[a][b][c]vstack=3' -frames:v 1 out.png",
  ])("still accepts the everyday forms: %s", (tail) => {
    expect(() => checkCommand(withInput(tail))).not.toThrow();
  });
});

describe("18.8 intermediate frames judged again once the inputs' sizes are known (the transcoder's runtime guard)", () => {
  const TWO_INPUTS = `ffmpeg -i ${IN} -i https://example.com/small.mp4 -filter_complex '[1:v]split=3[a][b][c];[a][b][c]hstack=3,scale=640:-2[v]' -map [v] out.mp4`;
  const UHD = { width: 3840, height: 2160 };
  const SMALL = { width: 640, height: 360 };
  const COVER = `ffmpeg -i ${IN} -vf 'scale=1080:1920:force_original_aspect_ratio=increase,crop=1080:1920' out.mp4`;

  function refusalWith(command: string, inputVideo: { width: number; height: number }[][]): string | undefined {
    try {
      checkFramesFromInputs(checkCommand(command), DEFAULT_LIMITS, inputVideo, true);
    } catch (error) {
      if (error instanceof AppError) return `${error.code} ${error.detail}`;
      throw error;
    }
    return undefined;
  }

  it("takes each labelled input stream at its own input's size", () => {
    expect(refusalWith(TWO_INPUTS, [[UHD], [SMALL]])).toBeUndefined();
    expect(refusalWith(TWO_INPUTS, [[SMALL], [UHD]])).toMatch(/^LIMIT_EXCEEDED The filter 'hstack' makes frames of 11520x2160/);
  });

  it("lets input frames the input cap allows pass through filters that do not enlarge them", () => {
    const command = `ffmpeg -i ${IN} -vf 'format=yuv420p,setsar=1,crop=iw:ih-2,scale=1920:-2' out.mp4`;
    expect(refusalWith(command, [[{ width: 8192, height: 8192 }]])).toBeUndefined();
  });

  it("takes a stream ffmpeg chooses itself (-vf) at each input video's size", () => {
    const command = `ffmpeg -i ${IN} -vf 'tile=3x1,scale=640:-2' -frames:v 1 out.png`;
    expect(refusalWith(command, [[SMALL]])).toBeUndefined();
    expect(refusalWith(command, [[UHD]])).toMatch(/^LIMIT_EXCEEDED The filter 'tile' makes frames of 11520x2160/);
  });

  it("sizes a cover scale from the input's aspect ratio as ffmpeg does, and stops it past the caps", () => {
    expect(refusalWith(COVER, [[{ width: 1920, height: 1080 }]])).toBeUndefined();
    expect(refusalWith(COVER, [[{ width: 1080, height: 1920 }]])).toBeUndefined();
    expect(refusalWith(COVER, [[{ width: 4000, height: 100 }]])).toMatch(/^LIMIT_EXCEEDED The filter 'scale' makes frames of 76800x1920/);
    // Width 1920·1001/333 = 5771.7, rounded to 5772, then up to a multiple of 64.
    const divisible = `ffmpeg -i ${IN} -vf 'scale=1080:1920:force_original_aspect_ratio=increase:force_divisible_by=64,crop=1080:1920' out.mp4`;
    expect(refusalWith(divisible, [[{ width: 1001, height: 333 }]])).toBeUndefined();
    expect(refusalWith(divisible, [[{ width: 1001 * 2, height: 333 }]])).toMatch(/makes frames of 11584x1920/);
  });

  it("also takes each input turned, as ffmpeg turns a video its file says is rotated", () => {
    // Stored 200x400 and rotated, the graph gets 400x200: 16000 wide once it covers 100x8000.
    const command = `ffmpeg -i ${IN} -vf 'scale=100:8000:force_original_aspect_ratio=increase,crop=100:8000' out.mp4`;
    expect(refusalWith(command, [[{ width: 200, height: 400 }]])).toMatch(/'scale' makes frames of 16000x8000/);
    const labelled = `ffmpeg -i ${IN} -filter_complex '[0:v]scale=100:8000:force_original_aspect_ratio=increase,crop=100:8000[v]' -map [v] out.mp4`;
    expect(refusalWith(labelled, [[{ width: 200, height: 400 }]])).toMatch(/'scale' makes frames of 16000x8000/);
  });

  it("waits for every input before refusing what it cannot bound", () => {
    const command = `ffmpeg -i ${IN} -i ${IN} -filter_complex '[1:v]scale=1080:1920:force_original_aspect_ratio=increase,crop=1080:1920[v]' -map [v] out.mp4`;
    expect(() => checkFramesFromInputs(checkCommand(command), DEFAULT_LIMITS, [[SMALL]], false)).not.toThrow();
    expect(refusalWith(command, [[SMALL]])).toMatch(/force_original_aspect_ratio=increase grows the frame/);
    expect(refusalWith(command, [[SMALL], [SMALL]])).toBeUndefined();
  });

  it("judges every video stream of the inputs as the one -vf may be given", () => {
    expect(refusalWith(COVER, [[{ width: 1920, height: 1080 }], [{ width: 8000, height: 10 }]])).toMatch(/'scale' makes frames of 1536000x1920/);
    expect(refusalWith(`ffmpeg -i ${IN} -i ${IN} -filter_complex '[0:v]scale=1080:1920:force_original_aspect_ratio=increase,crop=1080:1920[v]' -map [v] out.mp4`, [[{ width: 1920, height: 1080 }], [{ width: 8000, height: 10 }]])).toBeUndefined();
  });

  it("follows aspect-kept and fixed sizes before the cover scale, and refuses covering a frame whose shape is only bounded", () => {
    const chained = (graph: string) => `ffmpeg -i ${IN} -vf '${graph},scale=1080:1920:force_original_aspect_ratio=increase,crop=1080:1920' out.mp4`;
    const WIDE = [[{ width: 8000, height: 100 }]];
    expect(refusalWith(chained("scale=4000:-2"), WIDE)).toMatch(/'scale' makes frames of 153600x1920/);
    expect(refusalWith(chained("scale=1280:720"), WIDE)).toBeUndefined();
    expect(refusalWith(chained("rotate=0:out_w=8000:out_h=10"), [[SMALL]])).toMatch(/^LIMIT_EXCEEDED The filter 'scale' force_original_aspect_ratio=increase grows the frame/);
  });

  it("bounds decrease by its box and computes it exactly from a known input", () => {
    const command = `ffmpeg -i ${IN} -vf 'scale=1280:720:force_original_aspect_ratio=decrease,tile=6x1,scale=640:-2' -frames:v 1 out.png`;
    expect(refusalWith(command, [[{ width: 1920, height: 1080 }]])).toBeUndefined();
    expect(refusalWith(command, [[{ width: 1080, height: 1920 }]])).toBeUndefined();
    expect(refusalWith(command, [[{ width: 8000, height: 100 }]])).toBeUndefined();
    expect(() => checkCommand(`ffmpeg -i ${IN} -vf 'scale=1920:1080:force_original_aspect_ratio=decrease,tile=6x1' -frames:v 1 out.png`)).toThrow(/'tile' makes frames of 11520x1080/);
  });
});
