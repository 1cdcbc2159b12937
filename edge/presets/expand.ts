import { quoteArgv } from "../../shared/ffmpeg/quote";
import type { PresetParameters } from "../../shared/schemas/presets";
import { substitute, templateWords } from "./template";
import { parameterValues } from "./values";

/**
 * The command a task runs from a preset: `params` checked against the preset's parameters
 * (PRESET_PARAMS_INVALID naming the parameter), each value put into the one word its
 * placeholder stands in, and the words quoted back into a command line that reads as exactly
 * those words. The caller still puts the result through the ffmpeg policy.
 *
 * @example
 * expandPreset({ name: "small", command: "ffmpeg -i {{input}} -vf scale={{width}}:-2 out.mp4", parameters }, { input: "https://example.com/a b.mp4", width: 640 });
 * // "ffmpeg -i 'https://example.com/a b.mp4' -vf scale=640:-2 out.mp4"
 */
export function expandPreset(preset: { name: string; command: string; parameters: PresetParameters }, params: Readonly<Record<string, unknown>> = {}): string {
  const values = parameterValues(preset.name, preset.parameters, params);
  return quoteArgv(substitute(templateWords(preset.command), values, "PRESET_PARAMS_INVALID"));
}
