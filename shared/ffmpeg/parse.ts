import { AppError } from "../errors";
import { OPTIONS, RESERVED_OPTIONS, baseName } from "./options";
import { tokenize } from "./tokenize";
import type { OptionUse, ParsedCommand } from "./types";

/**
 * Splits an ffmpeg argv by position: options before `-i X` belong to that input, options
 * before a bare word belong to that output (the bare word is its filename), and global
 * options may stand anywhere. Unknown options are refused here, because without knowing
 * whether an option takes a value the rest of the line cannot be read safely.
 */
export function parseArgv(argv: readonly string[]): ParsedCommand {
  const parsed: ParsedCommand = { globals: [], inputs: [], outputs: [] };
  let pending: OptionUse[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "-i") {
      const url = argv[++i];
      if (url === undefined) throw new AppError("OPTION_MISSING_VALUE", "'-i' needs an input URL after it.", { token });
      parsed.inputs.push({ url, options: pending });
      pending = [];
      continue;
    }
    if (token.startsWith("-") && token.length > 1 && !/^-\d/.test(token)) {
      const name = token.slice(1);
      const base = baseName(name);
      if (RESERVED_OPTIONS.has(base)) {
        throw new AppError("OPTION_RESERVED", `'${token}' is set by the service itself and cannot be given in a command.`, { token });
      }
      const rule = OPTIONS[base];
      if (!rule) throw new AppError("OPTION_NOT_ALLOWED", `'${token}' is not an allowed ffmpeg option.`, { token });
      const use: OptionUse = { name, base };
      if (rule.takesValue) {
        const value = argv[++i];
        if (value === undefined) throw new AppError("OPTION_MISSING_VALUE", `'${token}' needs a value after it.`, { token });
        use.value = value;
      }
      if (rule.scope === "global") parsed.globals.push(use);
      else pending.push(use);
      continue;
    }
    parsed.outputs.push({ filename: token, options: pending });
    pending = [];
  }
  if (pending.length > 0) {
    const dangling = pending.map((use) => `-${use.name}`).join(" ");
    throw new AppError("NO_OUTPUT", `The options '${dangling}' at the end apply to no output; put an output file name after them.`, { token: dangling });
  }
  if (parsed.inputs.length === 0) throw new AppError("NO_INPUT", "The command has no input: add '-i <https URL>'.");
  if (parsed.outputs.length === 0) throw new AppError("NO_OUTPUT", "The command has no output file name.");
  return parsed;
}

/** Tokenize and parse a user's command line. */
export function parseCommand(command: string): ParsedCommand {
  return parseArgv(tokenize(command));
}
