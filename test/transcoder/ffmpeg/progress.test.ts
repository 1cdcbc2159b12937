import { describe, expect, it } from "vitest";
import { checkCommand } from "../../../shared/ffmpeg/index";
import { ProgressParser, type ProgressSnapshot, parseFfmpegTime, parseRate, percentDone, planProgress } from "../../../transcoder/ffmpeg/progress";

const block = (lines: Record<string, string>, progress = "continue") =>
  `${Object.entries(lines).map(([key, value]) => `${key}=${value}`).join("\n")}\nprogress=${progress}\n`;

function parse(...chunks: string[]): ProgressSnapshot[] {
  const snapshots: ProgressSnapshot[] = [];
  const parser = new ProgressParser((snapshot) => snapshots.push(snapshot));
  for (const chunk of chunks) parser.push(Buffer.from(chunk));
  return snapshots;
}

describe("ProgressParser", () => {
  it("emits one snapshot per block, whatever the chunking", () => {
    const text = block({ frame: "10", out_time_us: "400000", out_time_ms: "400000", out_time: "00:00:00.400000", speed: "1.5x" }) + block({ frame: "50", out_time_us: "2000000", speed: "2x" }, "end");
    const whole = parse(text);
    const byBytes = parse(...text.split(""));
    expect(whole).toEqual([
      { frame: 10, outTimeSeconds: 0.4, speed: 1.5, end: false },
      { frame: 50, outTimeSeconds: 2, speed: 2, end: true },
    ]);
    expect(byBytes).toEqual(whole);
  });

  it("reads out_time_ms as microseconds (ffmpeg's naming quirk) and out_time as a clock when out_time_us is missing", () => {
    expect(parse(block({ out_time_ms: "1500000" }))[0]?.outTimeSeconds).toBe(1.5);
    expect(parse(block({ out_time: "00:01:02.500000" }))[0]?.outTimeSeconds).toBe(62.5);
  });

  it("treats N/A and the negative start-up times as unknown", () => {
    expect(parse(block({ out_time_us: "N/A", out_time_ms: "N/A", out_time: "N/A", speed: "N/A", frame: "0" }))[0]).toEqual({ frame: 0, end: false });
    expect(parse(block({ out_time_us: "-9223372036854775807", out_time: "-577014:32:22.775808" }))[0]?.outTimeSeconds).toBeUndefined();
  });

  it("ignores lines that are not key=value", () => {
    expect(parse("garbage\n\n=x\n" + block({ out_time_us: "1000000" }))).toEqual([{ outTimeSeconds: 1, end: false }]);
  });
});

describe("parseFfmpegTime", () => {
  it.each([
    ["10", 10], ["1.5", 1.5], [".5", 0.5], ["200ms", 0.2], ["1500000us", 1.5], ["3s", 3],
    ["01:30", 90], ["1:02:03.5", 3723.5], ["-5", -5], ["-00:00:02", -2],
  ])("reads %s as %d s", (text, seconds) => expect(parseFfmpegTime(text)).toBeCloseTo(seconds));

  it.each(["", "abc", "1:2:3:4", "10x", "1e3"])("refuses %j", (text) => expect(parseFfmpegTime(text)).toBeUndefined());
});

describe("parseRate", () => {
  it.each([["25", 25], ["30000/1001", 29.97], ["ntsc", 29.97], ["pal", 25], ["0/0", undefined], ["x", undefined]])("reads %s", (raw, rate) => {
    const parsed = parseRate(raw);
    if (rate === undefined) expect(parsed).toBeUndefined();
    else expect(parsed).toBeCloseTo(rate, 2);
  });
});

describe("planProgress", () => {
  const plan = (command: string, durations: (number | undefined)[], frameRate?: number) =>
    planProgress(checkCommand(command), durations.map((durationSeconds) => ({ durationSeconds, frameRate })));
  const A = "https://example.com/a.mp4";
  const B = "https://example.com/b.mp4";

  it("uses the input's duration", () => expect(plan(`ffmpeg -i ${A} out.mp4`, [60])).toEqual({ totalSeconds: 60 }));
  it("honours -ss on the input", () => expect(plan(`ffmpeg -ss 20 -i ${A} out.mp4`, [60])).toEqual({ totalSeconds: 40 }));
  it("honours -t on the input", () => expect(plan(`ffmpeg -t 5 -i ${A} out.mp4`, [60])).toEqual({ totalSeconds: 5 }));
  it("honours -to on the input, measured from its -ss", () => expect(plan(`ffmpeg -ss 10 -to 25 -i ${A} out.mp4`, [60])).toEqual({ totalSeconds: 15 }));
  it("honours -sseof on the input", () => expect(plan(`ffmpeg -sseof -8 -i ${A} out.mp4`, [60])).toEqual({ totalSeconds: 8 }));
  it("multiplies by -stream_loop", () => expect(plan(`ffmpeg -stream_loop 2 -i ${A} out.mp4`, [10])).toEqual({ totalSeconds: 30 }));
  it("honours -ss and -t on the output", () => expect(plan(`ffmpeg -i ${A} -ss 50 -t 30 out.mp4`, [60])).toEqual({ totalSeconds: 10 }));
  it("honours -to on the output", () => expect(plan(`ffmpeg -i ${A} -ss 5 -to 00:00:20 out.mp4`, [60])).toEqual({ totalSeconds: 15 }));
  it("lets -t win over -to, as ffmpeg does", () => expect(plan(`ffmpeg -i ${A} -to 50 -t 3 out.mp4`, [60])).toEqual({ totalSeconds: 3 }));
  it("uses a time limit when the duration is unknown", () => expect(plan(`ffmpeg -i ${A} -t 7 out.mp4`, [undefined])).toEqual({ totalSeconds: 7 }));

  it("turns -frames:v into seconds at the input's frame rate", () => {
    expect(plan(`ffmpeg -i ${A} -frames:v 50 out.mp4`, [60], 25)).toEqual({ totalSeconds: 2, totalFrames: 50 });
  });
  it("turns -vframes into seconds at the output's -r", () => {
    expect(plan(`ffmpeg -i ${A} -r 10 -vframes 30 out.mp4`, [60], 25)).toEqual({ totalSeconds: 3, totalFrames: 30 });
  });
  it("keeps a frame count when nothing gives a duration", () => {
    expect(plan(`ffmpeg -i ${A} -frames:v 40 out.mp4`, [undefined])).toEqual({ totalFrames: 40 });
  });

  it("takes the longest input, or the shortest with -shortest", () => {
    expect(plan(`ffmpeg -i ${A} -i ${B} out.mp4`, [10, 30])).toEqual({ totalSeconds: 30 });
    expect(plan(`ffmpeg -i ${A} -i ${B} -shortest out.mp4`, [10, 30])).toEqual({ totalSeconds: 10 });
  });

  it("takes the longest output, since ffmpeg reports the most advanced one", () => {
    expect(plan(`ffmpeg -i ${A} -t 5 short.mp4 -t 20 long.mp4`, [60])).toEqual({ totalSeconds: 20 });
  });

  it("knows nothing when nothing is known", () => expect(plan(`ffmpeg -i ${A} out.mp4`, [undefined])).toEqual({}));
});

describe("percentDone", () => {
  it("divides out_time by the planned seconds, clamped to 0–100", () => {
    expect(percentDone({ outTimeSeconds: 15, end: false }, { totalSeconds: 60 })).toBe(25);
    expect(percentDone({ outTimeSeconds: 90, end: false }, { totalSeconds: 60 })).toBe(100);
  });
  it("falls back to frames", () => expect(percentDone({ frame: 10, end: false }, { totalFrames: 40 })).toBe(25));
  it("is 100 at the end", () => expect(percentDone({ end: true }, {})).toBe(100));
  it("is unknown without a plan", () => expect(percentDone({ outTimeSeconds: 3, end: false }, {})).toBeUndefined());
});
