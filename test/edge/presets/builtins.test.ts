import { describe, expect, it } from "vitest";
import { checkCommand } from "../../../shared/ffmpeg";
import { BUILTIN_PRESETS } from "../../../edge/presets/builtins";
import { checkPresetDefinition } from "../../../edge/presets/definition";
import { expandPreset } from "../../../edge/presets/expand";

describe("the built-in presets", () => {
  it("are the seven the issue names", () => {
    expect(BUILTIN_PRESETS.map((preset) => preset.name)).toEqual(["thumbnail", "gif", "hls-ladder", "audio-extract", "trim", "watermark", "subtitles-burn-in"]);
    expect(BUILTIN_PRESETS.every((preset) => preset.builtin && preset.id === preset.name)).toBe(true);
  });

  it.each(BUILTIN_PRESETS.map((preset) => [preset.name, preset] as const))("%s passes every check a user's preset must pass to be saved", (_, preset) => {
    expect(() => checkPresetDefinition({ name: preset.name, description: preset.description ?? undefined, command: preset.command, parameters: preset.parameters }, {})).not.toThrow();
  });

  it.each(BUILTIN_PRESETS.map((preset) => [preset.name, preset] as const))("%s expands, with its required parameters' examples, into a command the policy accepts", (_, preset) => {
    const params = Object.fromEntries((preset.parameters.required ?? []).map((name) => [name, (preset.parameters.properties[name]!.examples as unknown[])[0]]));
    const parsed = checkCommand(expandPreset(preset, params));
    expect(parsed.outputs.length).toBeGreaterThan(0);
    expect(parsed.inputs.map((input) => input.url)).toEqual(expect.arrayContaining(Object.values(params)));
  });
});
