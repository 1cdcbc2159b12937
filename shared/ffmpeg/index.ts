import { parseArgv } from "./parse";
import { enforcePolicy } from "./policy";
import { tokenize } from "./tokenize";
import type { ParsedCommand } from "./types";

export { buildArgv, type LocalPaths } from "./argv";
export type { InputSpec, OptionUse, OutputSpec, ParsedCommand } from "./types";

/**
 * The one entry point both sides use: tokenize, parse by position, apply the policy.
 * Throws an AppError (400-class, with the offending `token`) for any refused command.
 */
export function checkCommand(command: string): ParsedCommand {
  return enforcePolicy(parseArgv(tokenize(command)));
}
