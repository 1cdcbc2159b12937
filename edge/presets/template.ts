import { AppError, type ErrorCode } from "../../shared/errors";
import { tokenize } from "../../shared/ffmpeg/tokenize";
import { PARAMETER_NAME } from "../../shared/schemas/presets";
import { type TemplateWord, GRAPH_SYNTAX, forbiddenIn, isInputFileArgument, wordContexts } from "./contexts";

export type { TemplateWord } from "./contexts";

/** A parameter's value once checked against its schema. */
export type ParameterValue = string | number | boolean;

/**
 * The command's words as the shell rules read them (tokenize), each split into text and
 * `{{name}}` placeholders. Placeholders are found after the words are known, so no value can
 * ever change where one word ends; a word that starts with '-' may hold none, so no value can
 * choose an option.
 */
export function templateWords(command: string): TemplateWord[] {
  const spaced = /\{\{(\s+[^{}\s]*\s*|[^{}\s]*\s+)\}\}/.exec(command);
  if (spaced) {
    const name = spaced[1]!.trim();
    throw invalid(`'${spaced[0]}' has spaces inside the braces: write {{${name}}}, with no spaces.`, { placeholder: name });
  }
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
 * for placeholders, quotes or spaces, and fills exactly the word its placeholder stood in. It
 * may not carry the syntax of where it stands (contexts.ts): a whole word may not start with
 * '-'; in a filtergraph no quoting, separators, ':', '=', '|', '%' or braces; in an option's
 * key=value list no separators or flag signs; in an output file name only letters, digits,
 * '_', '.', '+', '-'. None may carry control characters. `code` is the refusal's code:
 * PRESET_PARAMS_INVALID for a caller's values, PRESET_INVALID for the preset's own samples.
 */
export function substitute(words: readonly TemplateWord[], values: Readonly<Record<string, ParameterValue>>, code: ErrorCode): string[] {
  const contexts = wordContexts(words);
  const text = (name: string) => asText(name, values[name], code);
  const inputUrls = words.flatMap((word, i) => (contexts[i] === "input" && word.length === 1 && typeof word[0] !== "string" ? [text(word[0]!.param)] : []));
  return words.map((word, i) => {
    const whole = word.length === 1;
    return word.map((piece, index) => {
      if (typeof piece === "string") return piece;
      const value = text(piece.param);
      const refuse = (why: string) => refusal(code, piece.param, values[piece.param], why);
      if (whole && value.startsWith("-")) throw refuse("fills a whole argument and must not start with '-', which ffmpeg would read as an option");
      const rule = forbiddenIn(contexts[i]!, word, index, whole);
      const inputFile = contexts[i] === "filter" && inputUrls.includes(value) && isInputFileArgument(word, index);
      const pattern = inputFile ? GRAPH_SYNTAX : rule?.pattern;
      const found = pattern ? [...new Set(value.match(pattern) ?? [])] : [];
      if (found.length > 0) throw refuse(`${rule!.why}, and must not contain ${found.map((character) => JSON.stringify(character)).join(", ")}`);
      return value;
    }).join("");
  });
}

/** A value as the command's text: booleans as 1 or 0, numbers in plain decimal digits (never `1e-7`). */
function asText(name: string, value: ParameterValue | undefined, code: ErrorCode): string {
  if (value === undefined) throw refusal(code, name, value, "has no value");
  const text = valueText(value);
  if (/[\u0000-\u001f\u007f]/.test(text)) throw refusal(code, name, value, "must not contain control characters (newlines, tabs, NUL)");
  return text;
}

/** A value as the command's text: booleans as 1 or 0, numbers in plain decimal digits. */
export function valueText(value: ParameterValue): string {
  return typeof value === "boolean" ? (value ? "1" : "0") : typeof value === "number" ? plainNumber(value) : value;
}

function refusal(code: ErrorCode, name: string, value: ParameterValue | undefined, why: string): AppError {
  const subject = code === "PRESET_INVALID" ? `parameters.properties.${name} (its sample value ${JSON.stringify(value)})` : `params.${name}`;
  return new AppError(code, `${subject}: ${why}.`, { param: name });
}

/**
 * A finite number in decimal digits without exponent: what String() gives, except where
 * String() switches to exponents (below 1e-6, from 1e21).
 *
 * @example
 * plainNumber(0.0000001); // "0.0000001"
 * plainNumber(1e21); // "1000000000000000000000"
 */
export function plainNumber(value: number): string {
  const text = String(value);
  const exponent = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(text);
  if (!exponent) return text;
  const [, sign, first, rest = "", power] = exponent;
  const digits = first! + rest;
  const point = 1 + Number(power);
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${"0".repeat(point - digits.length)}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

export function invalid(detail: string, extra: Record<string, unknown> = {}): AppError {
  return new AppError("PRESET_INVALID", detail, extra);
}
