import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { checkPresetDefinition } from "../../../edge/presets/definition";

const INPUT = { type: "string", examples: ["https://example.com/in.mp4"] };
const CRF = { type: "integer", minimum: 0, maximum: 51, default: 23 };
const WEB = {
  name: "web-720p",
  command: "ffmpeg -i {{input}} -vf scale={{width}}:-2 -c:v libx264 -crf {{crf}} out.mp4",
  parameters: { type: "object", properties: { input: INPUT, width: { type: "integer", minimum: 16, maximum: 8192, default: 1280 }, crf: CRF }, required: ["input"] },
};

function refusal(input: unknown): AppError {
  try {
    checkPresetDefinition(input, {});
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error(`expected PRESET_INVALID for ${JSON.stringify(input)}`);
}

const withParameters = (properties: Record<string, unknown>, command: string, required: string[] = []) => ({ name: "p", command, parameters: { type: "object", properties, required } });

describe("checkPresetDefinition", () => {
  it("accepts the issue's example and returns it with its defaults", () => {
    expect(checkPresetDefinition(WEB, {})).toMatchObject({ name: "web-720p", parameters: { required: ["input"] } });
    expect(checkPresetDefinition({ name: "fixed", command: "ffmpeg -i https://example.com/a.mp4 -t 1 out.mp4" }, {}).parameters).toEqual({ type: "object", properties: {} });
  });

  it.each([
    ["a keyword outside the subset", withParameters({ input: { ...INPUT, format: "uri" } }, "ffmpeg -i {{input}} o.mp4", ["input"]), "parameters.properties.input"],
    ["an array parameter", withParameters({ input: { type: "array" } }, "ffmpeg -i {{input}} o.mp4", ["input"]), "parameters.properties.input"],
    ["a bad parameter name", withParameters({ "in-put": INPUT }, "ffmpeg -i {{in-put}} o.mp4"), "parameters.properties.in-put"],
    ["required naming nothing", withParameters({ input: INPUT }, "ffmpeg -i {{input}} o.mp4", ["input", "nope"]), "parameters.required"],
    ["minimum above maximum", withParameters({ input: INPUT, crf: { type: "integer", minimum: 9, maximum: 3, default: 5 } }, "ffmpeg -i {{input}} -crf {{crf}} o.mp4", ["input"]), "parameters.properties.crf"],
    ["a default out of range", withParameters({ input: INPUT, crf: { ...CRF, default: 60 } }, "ffmpeg -i {{input}} -crf {{crf}} o.mp4", ["input"]), "parameters.properties.crf"],
    ["an optional parameter without default", withParameters({ input: INPUT, crf: { type: "integer", minimum: 0, maximum: 51 } }, "ffmpeg -i {{input}} -crf {{crf}} o.mp4", ["input"]), "parameters.properties.crf"],
    ["a string without a sample", withParameters({ input: { type: "string" } }, "ffmpeg -i {{input}} o.mp4", ["input"]), "parameters.properties.input"],
    ["an invalid pattern", withParameters({ input: { ...INPUT, pattern: "(" } }, "ffmpeg -i {{input}} o.mp4", ["input"]), "parameters.properties.input"],
    ["an example the pattern refuses", withParameters({ input: { ...INPUT, pattern: "^https://cdn\\.example\\.com/" } }, "ffmpeg -i {{input}} o.mp4", ["input"]), "parameters.properties.input"],
  ])("refuses %s, naming the field", (_, input, field) => {
    const error = refusal(input);
    expect(error.code).toBe("PRESET_INVALID");
    expect(String(error.extra.field).startsWith(field), `${error.extra.field} under ${field}`).toBe(true);
  });

  it("refuses a placeholder that names no parameter", () => {
    const error = refusal(withParameters({ input: INPUT }, "ffmpeg -i {{input}} -crf {{crf}} o.mp4", ["input"]));
    expect(error).toMatchObject({ code: "PRESET_INVALID", extra: { placeholder: "crf" } });
    expect(error.detail).toContain("{{crf}}");
  });

  it("refuses a parameter the command never uses", () => {
    expect(refusal(withParameters({ input: INPUT, crf: CRF }, "ffmpeg -i {{input}} o.mp4", ["input"]))).toMatchObject({ code: "PRESET_INVALID", extra: { field: "parameters.properties.crf" } });
  });

  it.each(["-{{opt}}", "-c:{{opt}}", "-{{opt}}:v"])("refuses a placeholder in the option name %s", (word) => {
    const error = refusal(withParameters({ input: INPUT, opt: { type: "string", enum: ["v"], default: "v" } }, `ffmpeg -i {{input}} ${word} libx264 o.mp4`, ["input"]));
    expect(error).toMatchObject({ code: "PRESET_INVALID", extra: { token: word } });
    expect(error.detail).toContain("option name");
  });

  it.each(["{{ input }}", "{{in put}}", "{{steps.0.outputs.a.mp4}}", "{{input", "input}}", "{{}}"])("refuses the malformed placeholder %s", (text) => {
    expect(refusal(withParameters({ input: INPUT }, `ffmpeg -i {{input}} -metadata "title=${text}" o.mp4`, ["input"]))).toMatchObject({ code: "PRESET_INVALID" });
  });

  it("refuses a command the policy refuses with the sample values, saying which values and which rule", () => {
    const error = refusal(withParameters({ input: { type: "string", examples: ["/etc/passwd"] } }, "ffmpeg -i {{input}} o.mp4", ["input"]));
    expect(error).toMatchObject({ code: "PRESET_INVALID", extra: { policy_code: "INPUT_NOT_ALLOWED" } });
    expect(error.detail).toContain('input="/etc/passwd"');
  });

  it("checks numbers at their maximum too, so a range the policy's caps refuse cannot be saved", () => {
    const error = refusal(withParameters({ input: INPUT, width: { type: "integer", minimum: 16, maximum: 100_000, default: 640 } }, "ffmpeg -i {{input}} -vf scale={{width}}:-2 o.mp4", ["input"]));
    expect(error).toMatchObject({ code: "PRESET_INVALID" });
    expect(error.detail).toContain("width=100000");
  });

  it("refuses a command the shell rules refuse, and one that names a program other than ffmpeg", () => {
    expect(refusal(withParameters({ input: INPUT }, "ffmpeg -i {{input}} o.mp4; id", ["input"]))).toMatchObject({ code: "PRESET_INVALID", extra: { policy_code: "COMMAND_SHELL_OPERATOR" } });
    expect(refusal(withParameters({ input: INPUT }, "{{input}} -i x o.mp4", ["input"]))).toMatchObject({ code: "PRESET_INVALID", extra: { policy_code: "PROGRAM_NOT_ALLOWED" } });
  });

  it("refuses a sample value that would start an option where it fills a whole argument", () => {
    expect(refusal(withParameters({ input: { type: "string", examples: ["-f lavfi"] } }, "ffmpeg -i {{input}} o.mp4", ["input"]))).toMatchObject({ code: "PRESET_INVALID", extra: { param: "input" } });
  });
});
