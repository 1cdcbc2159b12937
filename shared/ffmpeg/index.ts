import type { UrlPolicyOptions } from "../net/url-policy";
import { resolveLimits, type PolicyLimits } from "./limits";
import { parseArgv } from "./parse";
import { enforcePolicy } from "./policy";
import { tokenize } from "./tokenize";
import type { ParsedCommand } from "./types";

export { buildArgv } from "./argv";
export { DEFAULT_LIMITS, type PolicyLimits } from "./limits";
export type { OptionUse, ParsedCommand } from "./types";
export { checkSteps, stepReferenceOf, type CheckedStep, type StepSpec } from "./steps";

export interface CommandPolicyOptions extends UrlPolicyOptions {
  /** Tighter or looser caps than DEFAULT_LIMITS (for example per plan). */
  limits?: Partial<PolicyLimits>;
}

/**
 * The one entry point both sides use: tokenize like a shell (without running one), parse by
 * position like ffmpeg, then apply the whole policy. Throws an AppError — 400-class, 413
 * `COMMAND_TOO_LONG` for huge commands — whose `detail` explains the refusal and whose
 * `extra.token` names the word or filter at fault. Input URLs pass the shared URL policy, so
 * `allowHosts` must be the caller's development allow-list (empty in production).
 *
 * @example
 * const parsed = checkCommand("ffmpeg -y -i https://example.com/a.mp4 -vf scale=640:-2 small.mp4");
 * parsed.outputs[0].filename; // "small.mp4"
 */
export function checkCommand(command: string, options: CommandPolicyOptions = {}): ParsedCommand {
  const resolved = resolveLimits(options.limits);
  return enforcePolicy(parseArgv(tokenize(command, resolved)), resolved, { allowHosts: options.allowHosts });
}
