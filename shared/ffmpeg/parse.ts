import { OPTIONS, REFUSED_OPTIONS, STRIPPED_OPTIONS, type OptionRule } from "./options";
import { quote, refuse } from "./refusal";
import type { OptionUse, ParsedCommand } from "./types";

const SPECIFIER = /^[A-Za-z0-9_:#.-]{1,32}$/;

/**
 * Splits an argv the way ffmpeg's `split_commandline` does: a word starting with `-` (and
 * longer than `-`) is an option, which takes the next word as its value if the option table
 * says so; options before `-i URL` belong to that input, options before any other word belong
 * to that output (the word is its file name), and global options may stand anywhere.
 * Options are refused here when unknown, reserved or out of place, because without knowing
 * whether an option takes a value the rest of the line cannot be read safely.
 */
export function parseArgv(argv: readonly string[]): ParsedCommand {
  const parsed: ParsedCommand = { globals: [], inputs: [], outputs: [] };
  let pending: OptionUse[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "-i") {
      const url = argv[++i];
      if (url === undefined) throw refuse("OPTION_MISSING_VALUE", token, "'-i' needs an input URL after it.");
      parsed.inputs.push({ url, options: placed(pending, "input", url) });
      pending = [];
    } else if (!isOption(token)) {
      parsed.outputs.push({ filename: token, options: placed(pending, "output", token) });
      pending = [];
    } else {
      const use = readOption(token, argv[i + 1]);
      if (use === undefined) continue;
      if (use.value !== undefined) i++;
      if (OPTIONS[use.base]!.global) parsed.globals.push(use);
      else pending.push(use);
    }
  }
  if (pending.length > 0) {
    const dangling = `-${pending[0]!.name}`;
    throw refuse("NO_OUTPUT", dangling, `The option ${quote(dangling)} at the end applies to no output: put an output file name after it.`);
  }
  if (parsed.inputs.length === 0) throw refuse("NO_INPUT", undefined, "The command has no input: add '-i <https URL>'.");
  if (parsed.outputs.length === 0) throw refuse("NO_OUTPUT", undefined, "The command has no output file name.");
  return parsed;
}

function isOption(token: string): boolean {
  return token.startsWith("-") && token.length > 1;
}

/** The option a token starts, with its value; undefined for options the service drops. */
function readOption(token: string, next: string | undefined): OptionUse | undefined {
  const name = token.slice(1);
  if (name.startsWith("/")) {
    throw refuse("OPTION_NOT_ALLOWED", token, `${quote(token)} uses ffmpeg's '-/option FILE' syntax, which reads the value from a file.`);
  }
  const colon = name.indexOf(":");
  const base = colon === -1 ? name : name.slice(0, colon);
  if (STRIPPED_OPTIONS.has(name)) return undefined;
  const refusal = REFUSED_OPTIONS[base];
  if (refusal) throw refuse(refusal.code, token, `${quote(token)} ${refusal.reason}.`);
  const rule = OPTIONS[base];
  if (!rule) throw refuse("OPTION_NOT_ALLOWED", token, `${quote(token)} is not an ffmpeg option the service allows.`);
  if (colon !== -1) checkSpecifier(token, name.slice(colon + 1), rule);
  const use: OptionUse = { name, base };
  if (rule.takesValue) {
    if (next === undefined) throw refuse("OPTION_MISSING_VALUE", token, `${quote(token)} needs a value after it.`);
    use.value = next;
  }
  return use;
}

function checkSpecifier(token: string, specifier: string, rule: OptionRule): void {
  if (!rule.specifier) throw refuse("OPTION_NOT_ALLOWED", token, `${quote(token)}: this option takes no stream specifier.`);
  if (!SPECIFIER.test(specifier)) throw refuse("OPTION_NOT_ALLOWED", token, `${quote(token)} has a stream specifier that is not one, such as v, a:0 or s:a:0.`);
}

/** Attaches pending options to an input or output, refusing those that cannot apply there. */
function placed(pending: OptionUse[], where: "input" | "output", target: string): OptionUse[] {
  for (const use of pending) {
    if (OPTIONS[use.base]![where]) continue;
    const token = `-${use.name}`;
    const advice = where === "input" ? "it applies to outputs: put it before the output file name, not before '-i'" : "it applies to inputs: put it before '-i <URL>'";
    throw refuse("OPTION_NOT_ALLOWED", token, `${quote(token)} cannot be used for ${quote(target)}; ${advice}.`);
  }
  return pending;
}
