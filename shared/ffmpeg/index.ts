import { resolveLimits, type PolicyLimits } from "./limits";
import { parseArgv } from "./parse";
import { enforcePolicy } from "./policy";
import { tokenize } from "./tokenize";
import type { ParsedCommand } from "./types";

export { buildArgv, type LocalPaths } from "./argv";
export { DEFAULT_LIMITS, type PolicyLimits } from "./limits";
export type { InputSpec, OptionUse, OutputSpec, ParsedCommand } from "./types";

/**
 * The one entry point both sides use: tokenize like a shell (without running one), parse by
 * position like ffmpeg, then apply the whole policy. Throws an AppError — 400-class, 413
 * `COMMAND_TOO_LONG` for huge commands — whose `detail` explains the refusal and whose
 * `extra.token` names the word or filter at fault.
 *
 * @example
 * const parsed = checkCommand("ffmpeg -y -i https://example.com/a.mp4 -vf scale=640:-2 small.mp4");
 * parsed.outputs[0].filename; // "small.mp4"
 */
export function checkCommand(command: string, limits: Partial<PolicyLimits> = {}): ParsedCommand {
  const resolved = resolveLimits(limits);
  return enforcePolicy(parseArgv(tokenize(command, resolved)), resolved);
}
