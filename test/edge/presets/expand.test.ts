import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { checkCommand } from "../../../shared/ffmpeg";
import { tokenize } from "../../../shared/ffmpeg/tokenize";
import type { PresetParameters } from "../../../shared/schemas/presets";
import { expandPreset } from "../../../edge/presets/expand";

const parameters: PresetParameters = {
  type: "object",
  properties: {
    input: { type: "string", maxLength: 2048, examples: ["https://example.com/in.mp4"] },
    width: { type: "integer", minimum: 16, maximum: 8192, default: 1280 },
    crf: { type: "integer", minimum: 0, maximum: 51, default: 23 },
    title: { type: "string", maxLength: 100, default: "clip" },
    fast: { type: "boolean", default: false },
  },
  required: ["input"],
};
const PRESET = {
  name: "web",
  command: 'ffmpeg -i {{input}} -vf "scale={{width}}:-2" -c:v libx264 -crf {{crf}} -metadata title={{title}} -metadata comment={{fast}} out.mp4',
  parameters,
};
const URL = "https://example.com/in.mp4";

function refusal(params: Record<string, unknown>): AppError {
  try {
    expandPreset(PRESET, params);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error(`expected a refusal for ${JSON.stringify(params)}`);
}

describe("expandPreset", () => {
  it("puts each value into its word, fills defaults, and gives a command the policy accepts", () => {
    const command = expandPreset(PRESET, { input: URL, width: 640 });
    expect(tokenize(command)).toEqual(["-i", URL, "-vf", "scale=640:-2", "-c:v", "libx264", "-crf", "23", "-metadata", "title=clip", "-metadata", "comment=0", "out.mp4"]);
    expect(checkCommand(command).outputs.map((output) => output.filename)).toEqual(["out.mp4"]);
  });

  it.each([
    [{ input: URL, crf: 52 }, "crf", "params.crf: must be ≤ 51."],
    [{ input: URL, crf: -1 }, "crf", "params.crf: must be ≥ 0."],
    [{ input: URL, crf: 2.5 }, "crf", "params.crf: must be an integer."],
    [{ input: URL, crf: "23" }, "crf", "params.crf: must be an integer."],
    [{ input: URL, fast: "yes" }, "fast", "params.fast: must be a boolean."],
    [{ input: URL, title: "t".repeat(101) }, "title", "params.title: must be at most 100 characters long."],
    [{ width: 640 }, "input", "params.input: is required."],
    [{ input: null }, "input", "params.input: must be a string."],
  ])("refuses %j with PRESET_PARAMS_INVALID naming %s", (params, param, detail) => {
    expect(refusal(params)).toMatchObject({ code: "PRESET_PARAMS_INVALID", status: 400, detail, extra: { param } });
  });

  it("refuses a parameter the preset does not declare, listing the ones it does", () => {
    const error = refusal({ input: URL, codec: "copy" });
    expect(error).toMatchObject({ code: "PRESET_PARAMS_INVALID", extra: { param: "codec", preset: "web" } });
    expect(error.detail).toContain("input, width, crf, title, fast");
  });

  it("refuses a value outside an enum or a pattern, saying which", () => {
    const strict: PresetParameters = { type: "object", properties: { input: { type: "string", pattern: "^https://example\\.com/", examples: [URL] }, preset: { type: "string", enum: ["fast", "slow"], default: "fast" } }, required: ["input"] };
    const preset = { name: "strict", command: "ffmpeg -i {{input}} -preset {{preset}} o.mp4", parameters: strict };
    expect(() => expandPreset(preset, { input: URL, preset: "placebo" })).toThrow('params.preset: must be one of "fast", "slow".');
    expect(() => expandPreset(preset, { input: "https://evil.example/x.mp4" })).toThrow("params.input: must match the pattern ^https://example\\.com/.");
  });
});

describe("parameter injection", () => {
  it("refuses a value that would start an option where it fills a whole argument ('-f lavfi')", () => {
    expect(refusal({ input: "-f lavfi" })).toMatchObject({ code: "PRESET_PARAMS_INVALID", extra: { param: "input" } });
  });

  it("keeps 'x -i file:///etc/passwd' one argument, which the policy then refuses as an input", () => {
    const command = expandPreset(PRESET, { input: "x -i file:///etc/passwd" });
    expect(tokenize(command).slice(0, 3)).toEqual(["-i", "x -i file:///etc/passwd", "-vf"]);
    expect(() => checkCommand(command)).toThrow(expect.objectContaining({ code: "INPUT_NOT_ALLOWED" }));
  });

  it("never reads a value for placeholders: '{{crf}}' stays literal text", () => {
    expect(tokenize(expandPreset(PRESET, { input: URL, title: "{{crf}}" }))).toContain("title={{crf}}");
  });

  it.each(["a' -f lavfi 'b", 'a" -f lavfi "b', "$(id)", "`id`", "$HOME", "a;b", "a | nc h 1"])("keeps %j one literal argument when it fills a whole one", (value) => {
    const command = expandPreset(PRESET, { input: `https://example.com/${value}` });
    expect(tokenize(command)[1]).toBe(`https://example.com/${value}`);
    expect(tokenize(command)).toHaveLength(13);
  });

  it.each(["a\nb", "a\rb", "a\tb", "a\0b", "a\u007fb"])("refuses control characters (%j)", (value) => {
    expect(refusal({ input: URL, title: value })).toMatchObject({ code: "PRESET_PARAMS_INVALID", extra: { param: "title" } });
  });

  it.each(["a,b", "a'b", 'a"b', "a\\b", "a;b", "a[b]", "a:b", "a=b", "a|b", "%{pts}"])("refuses filter syntax (%j) in a value that is part of a filter's argument", (value) => {
    const caption = { name: "caption", command: "ffmpeg -i {{input}} -vf drawtext=text={{title}}:fontsize=24 o.mp4", parameters: { type: "object" as const, properties: { input: parameters.properties.input!, title: parameters.properties.title! }, required: ["input"] } };
    expect(() => expandPreset(caption, { input: URL, title: value })).toThrow(expect.objectContaining({ code: "PRESET_PARAMS_INVALID", extra: { param: "title", preset: "caption" } }));
  });

  it.each(["a,b", "a'b", 'a"b', "a\\b", "a;b", "a[b]", "a:b", "a=b"])("keeps %j literal after '=' in a -metadata value, where ffmpeg reads no syntax", (value) => {
    expect(tokenize(expandPreset(PRESET, { input: URL, title: value }))).toContain(`title=${value}`);
  });

  it("refuses a negative number that would fill a whole argument", () => {
    const preset = { name: "seek", command: "ffmpeg -ss {{at}} -i https://example.com/a.mp4 o.mp4", parameters: { type: "object" as const, properties: { at: { type: "number" as const, minimum: -10, maximum: 10, default: 0 } } } };
    expect(() => expandPreset(preset, { at: -5 })).toThrow(expect.objectContaining({ code: "PRESET_PARAMS_INVALID" }));
    expect(tokenize(expandPreset(preset, { at: 2.5 }))).toEqual(["-ss", "2.5", "-i", "https://example.com/a.mp4", "o.mp4"]);
  });
});
