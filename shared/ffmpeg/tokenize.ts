import { parse as parseShellSyntax } from "shell-quote";
import { split } from "shlex";
import { DEFAULT_LIMITS, type PolicyLimits } from "./limits";
import { quote, refuse } from "./refusal";

type TokenLimits = Pick<PolicyLimits, "maxCommandLength" | "maxTokens">;

/**
 * Splits a command line into argv as a POSIX shell would quote it, without ever running a
 * shell, and drops a leading `ffmpeg`. shlex gives the words; shell-quote spots unquoted
 * operators (`;`, `|`, `&&`, `>`, `#`...); a small scan spots what neither reports (command
 * substitution, parameter expansion, bare newlines). All of these are refused rather than
 * taken literally, because a user who writes them expects a shell we do not run.
 */
export function tokenize(command: string, limits: TokenLimits = DEFAULT_LIMITS): string[] {
  if (command.length > limits.maxCommandLength) {
    throw refuse("COMMAND_TOO_LONG", undefined, `The command is ${command.length} characters long; the limit is ${limits.maxCommandLength}.`);
  }
  if (command.includes("\0")) throw refuse("COMMAND_SHELL_OPERATOR", "\0", "The command contains a NUL character, which no argument can carry.");
  const text = command.replace(/\r\n/g, "\n");
  scanShellSyntax(text);
  const words = splitWords(text);
  refuseShellOperators(text);
  if (words.length > limits.maxTokens) {
    throw refuse("LIMIT_EXCEEDED", words[limits.maxTokens], `The command has ${words.length} arguments; the limit is ${limits.maxTokens}.`);
  }
  const argv = withoutProgram(words);
  if (argv.length === 0) throw refuse("COMMAND_EMPTY", undefined, "The command has no arguments: give at least '-i <URL>' and an output file name.");
  return argv;
}

/** Quotes are balanced by now (scanShellSyntax); what shlex can still refuse is a trailing backslash. */
function splitWords(text: string): string[] {
  try {
    return split(text);
  } catch {
    throw refuse("COMMAND_UNBALANCED_QUOTES", "\\", "The command ends with a '\\' that escapes nothing.");
  }
}

/**
 * Walks the command with the shell's quoting rules and refuses expansions (`$(...)`, `` `...` ``,
 * `$VAR`, `${...}`, `$'...'`), unquoted newlines (which end a shell command) and unclosed
 * quotes, naming the word as written. Single quotes make everything literal, as in a shell.
 */
function scanShellSyntax(text: string): void {
  let quoteChar: "'" | '"' | undefined;
  let quoteStart = 0;
  let wordStart = 0;
  let hazard: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoteChar === "'") {
      if (c === "'") quoteChar = undefined;
      continue;
    }
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "`") hazard ??= "Backticks run a command in a shell";
    if (c === "$" && startsExpansion(text[i + 1], quoteChar === undefined)) hazard ??= "'$' expands a variable or runs a command in a shell";
    if (quoteChar === '"') {
      if (c === '"') quoteChar = undefined;
      continue;
    }
    if (c === "'" || c === '"') {
      quoteChar = c;
      quoteStart = i;
    } else if (/\s/.test(c)) {
      if (hazard) throw shellSyntax(text.slice(wordStart, i), hazard);
      if (c === "\n") throw shellSyntax("\n", "A newline ends a shell command (end the line with '\\' to continue it)");
      wordStart = i + 1;
    }
  }
  if (quoteChar !== undefined) {
    throw refuse("COMMAND_UNBALANCED_QUOTES", text.slice(quoteStart, quoteStart + 40), `The quote ${quote(quoteChar)} at character ${quoteStart + 1} is never closed.`);
  }
  if (hazard) throw shellSyntax(text.slice(wordStart), hazard);
}

function startsExpansion(next: string | undefined, unquoted: boolean): boolean {
  if (next === undefined) return false;
  if (/[A-Za-z0-9_({@*#?$!-]/.test(next)) return true;
  return unquoted && (next === "'" || next === '"');
}

function refuseShellOperators(text: string): void {
  for (const entry of parseShellSyntax(text, (name) => `$${name}`)) {
    if (typeof entry === "string") continue;
    if ("comment" in entry) throw shellSyntax(`#${entry.comment}`, "An unquoted '#' starts a shell comment");
    if ("op" in entry && entry.op !== "glob") throw shellSyntax(entry.op, `${quote(entry.op)} is shell syntax`);
  }
}

function shellSyntax(token: string, what: string): Error {
  return refuse("COMMAND_SHELL_OPERATOR", token, `${what}; commands run without a shell, so quote it if it is part of an argument.`);
}

/** A leading `ffmpeg` is optional; any other first word that is not an option names another program. */
function withoutProgram(words: string[]): string[] {
  const first = words[0];
  if (first === undefined || first.startsWith("-")) return words;
  if (first === "ffmpeg") return words.slice(1);
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(first)) {
    throw refuse("PROGRAM_NOT_ALLOWED", first, `${quote(first)} sets an environment variable; commands cannot set any.`);
  }
  const hint = /ffmpeg$/i.test(first) ? " Write it as plain 'ffmpeg', without a path." : "";
  throw refuse("PROGRAM_NOT_ALLOWED", first, `Only ffmpeg can be run, not ${quote(first)}; start the command with 'ffmpeg' or with its first option.${hint}`);
}
