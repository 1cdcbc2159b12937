import { parse as parseShellSyntax } from "shell-quote";
import { split } from "shlex";
import { AppError } from "../errors";

export const DEFAULT_MAX_COMMAND_LENGTH = 16 * 1024;
export const DEFAULT_MAX_TOKENS = 1000;

/**
 * Splits a command line into argv exactly as a POSIX shell would quote it, without ever
 * running a shell. shlex gives the words (and rejects unbalanced quotes); shell-quote is
 * used only to spot unquoted shell syntax (`;`, `|`, `&&`, `>`, `$(`, `#`...), which is refused
 * because a user who writes it expects a shell we do not run.
 */
export function tokenize(command: string, limits: { maxLength?: number; maxTokens?: number } = {}): string[] {
  const maxLength = limits.maxLength ?? DEFAULT_MAX_COMMAND_LENGTH;
  if (command.length > maxLength) {
    throw new AppError("COMMAND_TOO_LONG", `The command is ${command.length} characters; the limit is ${maxLength}.`);
  }
  if (command.includes("\0")) throw new AppError("COMMAND_SHELL_OPERATOR", "The command contains a NUL character.");
  let words: string[];
  try {
    words = split(command);
  } catch {
    throw new AppError("COMMAND_UNBALANCED_QUOTES", "The command has a quote that is never closed.");
  }
  for (const entry of parseShellSyntax(command, (name) => `$${name}`)) {
    if (typeof entry === "string") continue;
    if ("comment" in entry) throw new AppError("COMMAND_SHELL_OPERATOR", `Unquoted '#' starts a shell comment; quote it if it is part of an argument.`, { token: `#${entry.comment}` });
    if ("op" in entry && entry.op !== "glob") {
      throw new AppError("COMMAND_SHELL_OPERATOR", `'${entry.op}' is shell syntax; commands run without a shell, so quote it if it is part of an argument.`, { token: entry.op });
    }
  }
  const maxTokens = limits.maxTokens ?? DEFAULT_MAX_TOKENS;
  if (words.length > maxTokens) {
    throw new AppError("COMMAND_TOO_LONG", `The command has ${words.length} arguments; the limit is ${maxTokens}.`);
  }
  if (words[0] !== undefined && /(^|\/)ffmpeg$/.test(words[0]) && words[0] !== "ffmpeg") {
    throw new AppError("PROGRAM_NOT_ALLOWED", `Only 'ffmpeg' can be run; write it without a path, not '${words[0]}'.`, { token: words[0] });
  }
  if (words[0] === "ffmpeg") words = words.slice(1);
  else if (words[0] !== undefined && !words[0].startsWith("-") && !/^https?:/i.test(words[0]) && isProgramName(words[0])) {
    throw new AppError("PROGRAM_NOT_ALLOWED", `Only ffmpeg commands can be run, not '${words[0]}'.`, { token: words[0] });
  }
  if (words.length === 0) throw new AppError("COMMAND_EMPTY", "The command has no arguments.");
  return words;
}

// A first word that is a bare program name (sh, bash, ffprobe, /bin/sh) rather than an
// output file name such as out.mp4.
function isProgramName(word: string): boolean {
  return word.includes("/") || !word.includes(".");
}
