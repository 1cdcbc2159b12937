import { AppError, type ErrorCode } from "../../shared/errors";
import { tokenize } from "../../shared/ffmpeg/tokenize";
import { PARAMETER_NAME } from "../../shared/schemas/presets";

/** One word of a preset's command: its literal text and its placeholders, in order. */
export type TemplateWord = (string | { param: string })[];

/** A parameter's value once checked against its schema. */
export type ParameterValue = string | number | boolean;

/** Characters that, inside a larger word, would end or escape a filter's quoting or start another filter or option list. */
const FILTER_SYNTAX = /['"\\,;[\]]/;

/**
 * The command's words as the shell rules read them (tokenize), each split into text and
 * `{{name}}` placeholders. Placeholders are found after the words are known, so no value can
 * ever change where one word ends; a word that starts with '-' may hold none, so no value can
 * choose an option.
 */
export function templateWords(command: string): TemplateWord[] {
  let words: string[];
  try {
    words = tokenize(command);
  } catch (error) {
    if (error instanceof AppError) throw invalid(`The command cannot be read: ${error.detail}`, { policy_code: error.code, ...error.extra });
    throw error;
  }
  return words.map((word) => {
    const pieces = piecesOf(word);
    if (word.startsWith("-") && pieces.some((piece) => typeof piece !== "string")) {
      throw invalid(`The word '${word}' is an option name with a placeholder in it: a parameter may fill a value, never choose an option.`, { token: word });
    }
    return pieces;
  });
}

function piecesOf(word: string): TemplateWord {
  const pieces: TemplateWord = [];
  let rest = word;
  while (rest.length > 0) {
    const open = rest.indexOf("{{");
    const close = rest.indexOf("}}");
    if (open < 0 && close < 0) break;
    if (open < 0 || (close >= 0 && close < open)) throw invalid(`The word '${word}' has a '}}' that closes no placeholder.`, { token: word });
    const end = rest.indexOf("}}", open + 2);
    if (end < 0) throw invalid(`The word '${word}' has a '{{' that is never closed.`, { token: word });
    const name = rest.slice(open + 2, end);
    if (!PARAMETER_NAME.test(name)) {
      throw invalid(`'{{${name}}}' is not a placeholder: write {{name}} with a parameter's name (a letter or '_', then letters, digits or '_').`, { placeholder: name });
    }
    if (open > 0) pieces.push(rest.slice(0, open));
    pieces.push({ param: name });
    rest = rest.slice(end + 2);
  }
  if (rest.length > 0) pieces.push(rest);
  return pieces;
}

/** The names the words' placeholders use, each once, in order of first use. */
export function placeholderNames(words: readonly TemplateWord[]): string[] {
  return [...new Set(words.flatMap((word) => word.flatMap((piece) => (typeof piece === "string" ? [] : [piece.param]))))];
}

/**
 * The argv with every placeholder replaced by its value, in one pass: a value is never read
 * for placeholders, quotes or spaces, and fills exactly the word its placeholder stood in.
 * A value that fills a whole word may not start with '-' (ffmpeg would read an option); one
 * inside a larger word may not carry filter syntax (quotes, '\', ',', ';', brackets); none
 * may carry control characters. `code` is the refusal's code: PRESET_PARAMS_INVALID for a
 * caller's values, PRESET_INVALID for the preset's own samples.
 */
export function substitute(words: readonly TemplateWord[], values: Readonly<Record<string, ParameterValue>>, code: ErrorCode): string[] {
  return words.map((word) => {
    const whole = word.length === 1 && typeof word[0] !== "string";
    return word.map((piece) => (typeof piece === "string" ? piece : rendered(piece.param, values[piece.param], whole, code))).join("");
  });
}

function rendered(name: string, value: ParameterValue | undefined, whole: boolean, code: ErrorCode): string {
  const subject = code === "PRESET_INVALID" ? `parameters.properties.${name} (its sample value ${JSON.stringify(value)})` : `params.${name}`;
  const refuse = (why: string) => new AppError(code, `${subject}: ${why}.`, { param: name });
  if (value === undefined) throw refuse("has no value");
  const text = typeof value === "boolean" ? (value ? "1" : "0") : String(value);
  if (/[\u0000-\u001f\u007f]/.test(text)) throw refuse("must not contain control characters (newlines, tabs, NUL)");
  if (whole && text.startsWith("-")) throw refuse("fills a whole argument and must not start with '-', which ffmpeg would read as an option");
  if (!whole && typeof value === "string" && FILTER_SYNTAX.test(text)) {
    throw refuse("is part of a larger argument and must not contain quotes, '\\', ',', ';', '[' or ']'");
  }
  return text;
}

export function invalid(detail: string, extra: Record<string, unknown> = {}): AppError {
  return new AppError("PRESET_INVALID", detail, extra);
}
