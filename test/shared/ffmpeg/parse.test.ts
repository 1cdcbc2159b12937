import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { parseArgv } from "../../../shared/ffmpeg/parse";

const URL_A = "https://h/a.mp4";
const URL_B = "https://h/b.mp4";

function refusal(argv: string[]): { code: string; token: unknown; detail: string } {
  try {
    parseArgv(argv);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { code: error.code, token: error.extra.token, detail: error.detail };
  }
  throw new Error(`expected a refusal for ${argv.join(" ")}`);
}

describe("parseArgv", () => {
  it("gives options before -i to that input and options before a name to that output", () => {
    expect(parseArgv(["-ss", "5", "-i", URL_A, "-t", "2", "-c:v", "libx264", "out.mp4"])).toEqual({
      globals: [],
      inputs: [{ url: URL_A, options: [{ name: "ss", base: "ss", value: "5" }] }],
      outputs: [{ filename: "out.mp4", options: [{ name: "t", base: "t", value: "2" }, { name: "c:v", base: "c", value: "libx264" }] }],
    });
  });

  it("collects global options wherever they stand", () => {
    const parsed = parseArgv(["-i", URL_A, "-filter_complex", "[0:v]null[v]", "-map", "[v]", "-loglevel", "error", "out.mp4"]);
    expect(parsed.globals.map((use) => use.name)).toEqual(["filter_complex", "loglevel"]);
    expect(parsed.outputs[0]!.options.map((use) => use.name)).toEqual(["map"]);
  });

  it("keeps stream specifiers in the name and the option in the base", () => {
    const parsed = parseArgv(["-i", URL_A, "-b:a:0", "128k", "-metadata:s:a:0", "language=eng", "-filter:v", "null", "-q:v", "2", "out.mp4"]);
    expect(parsed.outputs[0]!.options).toEqual([
      { name: "b:a:0", base: "b", value: "128k" },
      { name: "metadata:s:a:0", base: "metadata", value: "language=eng" },
      { name: "filter:v", base: "filter", value: "null" },
      { name: "q:v", base: "q", value: "2" },
    ]);
  });

  it("takes the next word as the value even when it starts with a dash", () => {
    const parsed = parseArgv(["-sseof", "-3", "-i", URL_A, "-map", "-0:s", "-map", "0", "out.mp4"]);
    expect(parsed.inputs[0]!.options).toEqual([{ name: "sseof", base: "sseof", value: "-3" }]);
    expect(parsed.outputs[0]!.options.map((use) => use.value)).toEqual(["-0:s", "0"]);
  });

  it("reads flags without a value, so the next word is a file name", () => {
    const parsed = parseArgv(["-i", URL_A, "-an", "video-only.mp4", "-vn", "audio.m4a"]);
    expect(parsed.outputs).toEqual([
      { filename: "video-only.mp4", options: [{ name: "an", base: "an" }] },
      { filename: "audio.m4a", options: [{ name: "vn", base: "vn" }] },
    ]);
  });

  it("handles inputs and outputs interleaved", () => {
    const parsed = parseArgv(["-i", URL_A, "a.mp4", "-i", URL_B, "b.mp4"]);
    expect(parsed.inputs.map((input) => input.url)).toEqual([URL_A, URL_B]);
    expect(parsed.outputs.map((output) => output.filename)).toEqual(["a.mp4", "b.mp4"]);
  });

  it("drops -y, -hide_banner and -nostats, which the service sets itself", () => {
    const parsed = parseArgv(["-y", "-hide_banner", "-nostats", "-i", URL_A, "-y", "out.mp4"]);
    expect(parsed).toEqual({ globals: [], inputs: [{ url: URL_A, options: [] }], outputs: [{ filename: "out.mp4", options: [] }] });
  });

  it("reads a lone '-' as an output name, as ffmpeg does (stdout)", () => {
    expect(parseArgv(["-i", URL_A, "-"]).outputs[0]!.filename).toBe("-");
  });

  it.each([
    [["-i", URL_A, "-c:v", "libx264"], "-c:v"],
    [["-i", URL_A, "out.mp4", "-t", "5"], "-t"],
  ])("refuses options that apply to no output: %j", (argv, token) => {
    expect(refusal(argv)).toMatchObject({ code: "NO_OUTPUT", token });
  });

  it("refuses an option missing its value", () => {
    expect(refusal(["-i", URL_A, "-c:v"])).toMatchObject({ code: "OPTION_MISSING_VALUE", token: "-c:v" });
  });

  it("refuses -i without a URL", () => {
    expect(refusal(["-i"])).toMatchObject({ code: "OPTION_MISSING_VALUE", token: "-i" });
  });

  it("refuses a command without input or without output", () => {
    expect(refusal(["out.mp4"])).toMatchObject({ code: "NO_INPUT" });
    expect(refusal(["-i", URL_A])).toMatchObject({ code: "NO_OUTPUT" });
  });

  it.each([["-frobnicate"], ["-1"], ["--"], ["-i:v"], ["-vframes:v"]])("refuses the unknown or misspelt option %s", (option) => {
    expect(refusal(["-i", URL_A, option, "x", "out.mp4"])).toMatchObject({ code: "OPTION_NOT_ALLOWED", token: option });
  });

  it("refuses a stream specifier on an option that takes none, since ffmpeg would ignore it", () => {
    expect(refusal(["-f:v", "mp4", "-i", URL_A, "out.mp4"])).toMatchObject({ code: "OPTION_NOT_ALLOWED", token: "-f:v" });
  });

  it("refuses a stream specifier that is not one", () => {
    expect(refusal(["-i", URL_A, "-c:v=libx264", "x", "out.mp4"])).toMatchObject({ code: "OPTION_NOT_ALLOWED", token: "-c:v=libx264" });
  });

  it("refuses an output option placed before -i, and says where it belongs", () => {
    const result = refusal(["-vf", "scale=2:2", "-i", URL_A, "out.mp4"]);
    expect(result).toMatchObject({ code: "OPTION_NOT_ALLOWED", token: "-vf" });
    expect(result.detail).toContain("before the output file name");
  });

  it("refuses an input option placed before an output name", () => {
    expect(refusal(["-i", URL_A, "-stream_loop", "2", "out.mp4"])).toMatchObject({ code: "OPTION_NOT_ALLOWED", token: "-stream_loop" });
  });
});
