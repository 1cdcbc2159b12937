import { describe, expect, it } from "vitest";
import { formFields, paramsOf, presetFieldOf } from "../../../../edge/console/client/schema-form";
import type { PresetParameters } from "../../../../shared/schemas/presets";

const PARAMETERS: PresetParameters = {
  type: "object",
  properties: {
    input: { type: "string", examples: ["https://example.com/in.mp4"] },
    width: { type: "integer", minimum: 16, maximum: 8192, default: 1280, title: "Width", description: "Pixels" },
    speed: { type: "number", minimum: 0.5, maximum: 4, default: 1 },
    codec: { type: "string", enum: ["libx264", "libx265"], default: "libx264" },
    crf: { type: "integer", enum: [18, 23, 28], default: 23 },
    mute: { type: "boolean", default: true },
    label: { type: "string", default: "hello", maxLength: 20, pattern: "^[a-z]+$" },
  },
  required: ["input"],
};

describe("a preset's parameters as a run form", () => {
  const fields = formFields(PARAMETERS);
  const byName = (name: string) => fields.find((field) => field.name === name)!;

  it("keeps the schema's order and marks only the required parameters", () => {
    expect(fields.map((field) => field.name)).toEqual(["input", "width", "speed", "codec", "crf", "mute", "label"]);
    expect(fields.filter((field) => field.required).map((field) => field.name)).toEqual(["input"]);
  });

  it("gives integers and numbers a number input with their range, integers in steps of 1", () => {
    expect(byName("width")).toMatchObject({ control: "number", min: 16, max: 8192, step: "1", initial: "1280", label: "Width", description: "Pixels" });
    expect(byName("speed")).toMatchObject({ control: "number", min: 0.5, max: 4, step: "any", initial: "1" });
  });

  it("turns an enum, of strings or of numbers, into a select of its values", () => {
    expect(byName("codec")).toMatchObject({ control: "select", options: ["libx264", "libx265"], initial: "libx264" });
    expect(byName("crf")).toMatchObject({ control: "select", type: "integer", options: ["18", "23", "28"], initial: "23" });
  });

  it("turns a boolean into a checkbox checked by its default", () => {
    expect(byName("mute")).toMatchObject({ control: "checkbox", initial: "true" });
  });

  it("offers the user's files for a string whose examples are URLs, and not for other strings", () => {
    expect(byName("input")).toMatchObject({ control: "text", fileInput: true, example: "https://example.com/in.mp4", initial: "" });
    expect(byName("label")).toMatchObject({ control: "text", fileInput: false, maxLength: 20, pattern: "^[a-z]+$" });
  });

  it("reads the form back with the parameters' types, leaving empty fields to the defaults", () => {
    const form: Record<string, string | boolean> = { input: " https://example.com/a.mp4 ", width: "640", speed: "1.5", codec: "libx265", crf: "28", mute: false, label: "" };
    expect(paramsOf(fields, (name) => form[name]!)).toEqual({ input: "https://example.com/a.mp4", width: 640, speed: 1.5, codec: "libx265", crf: 28, mute: false });
  });

  it("sends text typed into a number field as it is, for the API to refuse with the parameter named", () => {
    expect(paramsOf([byName("width")], () => "wide")).toEqual({ width: "wide" });
  });
});

describe("the editor field a refused preset is about", () => {
  it.each([
    [{ code: "PRESET_INVALID", field: "parameters.properties.crf" }, "parameters"],
    [{ code: "PRESET_INVALID", field: "parameters.required" }, "parameters"],
    [{ code: "PRESET_INVALID", field: "name" }, "name"],
    [{ code: "PRESET_INVALID", placeholder: "wdth" }, "command"],
    [{ code: "PRESET_INVALID", policy_code: "OPTION_NOT_ALLOWED" }, "command"],
    [{ code: "PRESET_NAME_TAKEN" }, "name"],
    [{ code: "RATE_LIMITED" }, undefined],
  ])("%o → %s", (problem, field) => {
    expect(presetFieldOf(problem)).toBe(field);
  });
});
