import { AppError } from "../../shared/errors";
import { checkCommand, type CommandPolicyOptions, type ParsedCommand } from "../../shared/ffmpeg";
import { quoteArgv } from "../../shared/ffmpeg/quote";
import type { PresetParameters } from "../../shared/schemas/presets";
import { type TemplateWord, substitute, templateWords, valueText } from "./template";
import { parameterValues } from "./values";

type PresetSource = { name: string; command: string; parameters: PresetParameters };

/**
 * The command a task runs from a preset: `params` checked against the preset's parameters
 * (PRESET_PARAMS_INVALID naming the parameter and the preset), each value put into the one
 * word its placeholder stands in, and the words quoted back into a command line that reads as
 * exactly those words. checkedPresetCommand also puts the result through the ffmpeg policy.
 *
 * @example
 * expandPreset({ name: "small", command: "ffmpeg -i {{input}} -vf scale={{width}}:-2 out.mp4", parameters }, { input: "https://example.com/a b.mp4", width: 640 });
 * // "ffmpeg -i 'https://example.com/a b.mp4' -vf scale=640:-2 out.mp4"
 */
export function expandPreset(preset: PresetSource, params: Readonly<Record<string, unknown>> = {}): string {
  return expanded(preset, params).command;
}

/**
 * expandPreset, then the ffmpeg policy; a policy refusal also names, as `param`, the parameter
 * whose value is in the refused token (and `preset`), when one is.
 */
export function checkedPresetCommand(preset: PresetSource, params: Readonly<Record<string, unknown>>, policy: CommandPolicyOptions): { command: string; parsed: ParsedCommand } {
  const { command, words, argv, texts } = expanded(preset, params);
  try {
    return { command, parsed: checkCommand(command, policy) };
  } catch (error) {
    if (!(error instanceof AppError) || typeof error.extra.token !== "string" || "param" in error.extra) throw error;
    const param = culprit(error.extra.token, words, argv, texts);
    if (param === undefined) throw error;
    throw new AppError(error.code, error.detail, { ...error.extra, param, preset: preset.name }).withHeaders(error.headers);
  }
}

function expanded(preset: PresetSource, params: Readonly<Record<string, unknown>>) {
  try {
    const values = parameterValues(preset.name, preset.parameters, params);
    const words = templateWords(preset.command);
    const argv = substitute(words, values, "PRESET_PARAMS_INVALID");
    const texts = Object.fromEntries(Object.entries(values).map(([name, value]) => [name, valueText(value)]));
    return { command: quoteArgv(argv), words, argv, texts };
  } catch (error) {
    if (error instanceof AppError && error.code === "PRESET_PARAMS_INVALID" && !("preset" in error.extra)) throw new AppError(error.code, error.detail, { ...error.extra, preset: preset.name });
    throw error;
  }
}

/** The parameter whose value the refused token holds: among the placeholders of the word that holds the token, the longest value found in it. */
function culprit(token: string, words: readonly TemplateWord[], argv: readonly string[], texts: Record<string, string>): string | undefined {
  const index = argv.findIndex((word) => word === token) >= 0 ? argv.findIndex((word) => word === token) : argv.findIndex((word) => word.includes(token));
  if (index < 0) return undefined;
  const names = words[index]!.flatMap((piece) => (typeof piece === "string" ? [] : [piece.param]));
  const found = names.filter((name) => texts[name] !== "" && (token.includes(texts[name]!) || texts[name]!.includes(token)));
  return found.sort((a, b) => texts[b]!.length - texts[a]!.length)[0];
}
