import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { buildArgv, checkCommand } from "../../../shared/ffmpeg/index";
import { SERVICE_PREFIX } from "./helpers";

/**
 * Commands built from real fragments mixed with hostile ones. Whatever the policy accepts
 * must turn into an argv that stays inside the job directory, opens no URL, and carries no
 * reserved option except the service's own at their fixed places.
 */

const REAL_INPUTS = ["https://example.com/video.mp4", "https://example.com/audio.wav", "HTTPS://example.com/sub/subs.srt"];
const HOSTILE_INPUTS = [
  "/etc/passwd", "file:///etc/passwd", "../in.mp4", "concat:/etc/passwd\\|/etc/hosts", "pipe:0", "-", "tcp://10.0.0.1:9",
  "'subfile,,start,0,end,0,,:/etc/passwd'", "async:https://example.com/a.mp4", "https://example.com/list.m3u8", "'data:,x'",
];
const REAL_INPUT_OPTIONS = ["-ss 1", "-t 2", "-f mp4", "-itsoffset 0.5", "-sseof -1", "-framerate 25", "-stream_loop 2", "-c:v h264", "-loop 1 -t 2"];
const HOSTILE_INPUT_OPTIONS = ["-f lavfi", "-f concat -safe 0", "-stream_loop -1", "-protocol_whitelist file,http", "-loop 1", "-allowed_extensions ALL"];
const REAL_OUTPUT_OPTIONS = [
  "-c:v libx264", "-preset veryfast", "-crf 23", "-c:a aac", "-b:a 128k", "-c copy", "-vf scale=640:-2", "-af volume=0.5",
  "-map 0", "-map 0:v:0", "-t 1", "-frames:v 1", "-movflags +faststart", "-metadata title=x", "-metadata:s:a:0 language=eng",
  "-y", "-pix_fmt yuv420p", "-r 25", "-s 320x240", "-shortest", "-vn", "-an",
  "-f hls -hls_time 2 -hls_segment_filename seg_%03d.ts", "-f segment -segment_list parts.m3u8", "-f hls -master_pl_name master.m3u8",
  `-vf "subtitles=https\\://example.com/video.mp4"`, "-vf subtitles=https://example.com/audio.wav",
  `-filter_complex "[0:v]split[a][b];[a]scale=2:2[c];[b][c]overlay"`, `-vf "drawtext=text='a\\, b':x=1"`,
];
const HOSTILE_OUTPUT_OPTIONS = [
  "-n", "-progress /tmp/p", "-report", "-vstats_file /tmp/v", "-attach /etc/passwd", "-dump_attachment:t a.ttf", "-f tee",
  "-vf movie=/etc/passwd", `-vf "scale=2:2,'movie'=/etc/passwd"`, "-vf subtitles=/etc/passwd", `-vf "subtitles='/etc/passwd'"`,
  "-vf drawtext=textfile=/etc/passwd", "-vf drawtext=/etc/passwd", "-hls_segment_filename ../x_%d.ts", "-segment_list /tmp/l.m3u8",
  "-master_pl_name ../m.m3u8", "-x264-params stats=/tmp/s", "-filter_script /etc/passwd", "-/vf /etc/passwd", "-method PUT",
  "-s 99999x2", "-threads 999", "-init_hw_device vaapi", "-vf lut3d=file=/etc/passwd", `-filter_complex "[0:v]sendcmd=f=/etc/x"`,
];
const REAL_OUTPUT_NAMES = ["out.mp4", "thumb_%03d.jpg", "index.m3u8", "clip.webm", "a.m4a", "poster.png", "seg_%03d.ts", "b.mkv", "c.mp3"];
const HOSTILE_OUTPUT_NAMES = [
  "../x.mp4", "/tmp/x.mp4", "udp://10.0.0.1:9", "file:x.mp4", ".x.mp4", "'a b.mp4'", "-", "x.sh", "'$(id).mp4'", "pipe:1",
];
const SHELL_NOISE = ["; id", "| nc h 1", "> /tmp/x", "$(id)", "`id`"];

/** Mostly real fragments, so that many generated commands are accepted; one in ten hostile. */
function mostlyReal(real: string[], hostile: string[]): fc.Arbitrary<string> {
  return fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...real) }, { weight: 1, arbitrary: fc.constantFrom(...hostile) });
}

const inputPart = fc
  .tuple(fc.array(mostlyReal(REAL_INPUT_OPTIONS, HOSTILE_INPUT_OPTIONS), { maxLength: 2 }), mostlyReal(REAL_INPUTS, HOSTILE_INPUTS))
  .map(([options, url]) => [...options, "-i", url].join(" "));
const outputPart = fc
  .tuple(fc.array(mostlyReal(REAL_OUTPUT_OPTIONS, HOSTILE_OUTPUT_OPTIONS), { maxLength: 3 }), mostlyReal(REAL_OUTPUT_NAMES, HOSTILE_OUTPUT_NAMES))
  .map(([options, name]) => [...options, name].join(" "));
const command = fc
  .tuple(fc.constantFrom("ffmpeg ", ""), fc.array(inputPart, { minLength: 1, maxLength: 3 }), fc.array(outputPart, { minLength: 1, maxLength: 3 }), mostlyReal([""], SHELL_NOISE))
  .map(([program, inputs, outputs, noise]) => `${program}${inputs.join(" ")} ${outputs.join(" ")} ${noise}`.trim());

const RESERVED = [
  "nostdin", "stdin", "hide_banner", "nostats", "stats", "y", "n", "progress", "protocol_whitelist", "protocol_blacklist", "safe",
  "allowed_extensions", "report", "vstats", "vstats_file", "passlogfile", "dump_attachment", "attach", "filter_script",
  "filter_complex_script", "init_hw_device", "hwaccel", "method", "f tee",
];
const SCHEME = /\b(https?|file|concat|data|pipe|tcp|udp|rtmp|rtsp|ftp|srt|gopher|subfile|async|cache|crypto|tee|unix|fd):/i;

function accepted(text: string): string[] | undefined {
  try {
    const parsed = checkCommand(text);
    return buildArgv(parsed, { inputPaths: parsed.inputs.map((_, index) => `/job/in/${index}`), outputDir: "/job/out" });
  } catch (error) {
    if (error instanceof AppError) return undefined;
    throw error;
  }
}

function expectSafeArgv(argv: string[]): void {
  expect(argv.slice(0, SERVICE_PREFIX.length)).toEqual(SERVICE_PREFIX);
  const rest = argv.slice(SERVICE_PREFIX.length);
  rest.forEach((word, index) => {
    if (word === "-i") {
      expect(rest[index - 2]).toBe("-protocol_whitelist");
      expect(rest[index - 1]).toBe("file");
      expect(rest[index + 1]).toMatch(/^\/job\/in\/\d+$/);
    } else if (word === "-protocol_whitelist") {
      expect(rest[index + 2]).toBe("-i");
    } else {
      for (const name of RESERVED) expect(word === `-${name}` || word.startsWith(`-${name}:`)).toBe(false);
    }
    expect(word).not.toMatch(SCHEME);
    expect(word).not.toContain("..");
    for (const path of word.match(/(?<![\w)])\/[\w./%-]+/g) ?? []) expect(path).toMatch(/^\/job\/(in|out)\//);
  });
  const last = rest.at(-1)!;
  expect(last).toMatch(/^\/job\/out\/[^/]+$/);
}

describe("checkCommand and buildArgv on generated commands", () => {
  it("turn every accepted command into an argv confined to the job directory", () => {
    let acceptedCount = 0;
    fc.assert(
      fc.property(command, (text) => {
        const argv = accepted(text);
        if (argv === undefined) return;
        acceptedCount++;
        expectSafeArgv(argv);
      }),
      { numRuns: 3000 },
    );
    expect(acceptedCount).toBeGreaterThan(500);
  });

  it("answer every refusal with a 4xx AppError that explains itself", () => {
    fc.assert(
      fc.property(command, (text) => {
        try {
          checkCommand(text);
        } catch (error) {
          expect(error).toBeInstanceOf(AppError);
          const appError = error as AppError;
          expect([400, 413]).toContain(appError.status);
          expect(appError.detail.length).toBeGreaterThan(10);
          if (!["COMMAND_TOO_LONG", "COMMAND_EMPTY", "NO_INPUT"].includes(appError.code) && !(appError.code === "NO_OUTPUT" && appError.extra.token === undefined)) {
            expect(typeof appError.extra.token).toBe("string");
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it("never crash on arbitrary text", () => {
    const noise = fc.string({ unit: fc.constantFrom("-", "i", " ", "'", '"', "\\", ":", "=", "[", "]", ",", ";", "/", "a", ".", "%", "$", "\n", "h", "s", "p", "t") });
    fc.assert(
      fc.property(noise, (text) => {
        const argv = accepted(`ffmpeg -i https://example.com/a.mp4 ${text}`);
        if (argv !== undefined) expectSafeArgv(argv);
      }),
      { numRuns: 3000 },
    );
  });
});
