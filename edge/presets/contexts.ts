import { FILTER_RULES } from "../../shared/ffmpeg/filter-catalogue";
import { OPTIONS } from "../../shared/ffmpeg/options";

/** One word of a preset's command: its literal text and its placeholders, in order. */
export type TemplateWord = (string | { param: string })[];

/**
 * Where a word stands in the command, which decides what its values may hold:
 * - `filter`: the value of -vf, -af, -filter[:…], -filter_complex or -lavfi (a filtergraph);
 * - `dictionary`: the value of an encoder's key=value list (-x264-params, -x265-params, …);
 * - `metadata`: the value of -metadata[:…] (`key=value`, the value kept as text);
 * - `value`: the value of any other option (-crf, -ss, -map, -movflags, …);
 * - `input`: the URL after -i;
 * - `output`: an output file name, or a file an option writes (-hls_segment_filename).
 */
export type WordContext = "option" | "filter" | "dictionary" | "metadata" | "value" | "input" | "output";

const DICTIONARIES = new Set(["x264-params", "x264opts", "x265-params", "svtav1-params", "aom-params"]);

/** Each word's context, read as ffmpeg reads an argv (placeholders never sit in an option name, so the option words are literal). */
export function wordContexts(words: readonly TemplateWord[]): WordContext[] {
  const text = words.map((word) => word.map((piece) => (typeof piece === "string" ? piece : "{{}}")).join(""));
  const contexts: WordContext[] = [];
  for (let i = 0; i < text.length; i++) {
    const word = text[i]!;
    if (!(word.startsWith("-") && word.length > 1)) {
      contexts.push("output");
      continue;
    }
    contexts.push("option");
    const base = word.slice(1).split(":")[0]!;
    const rule = OPTIONS[base];
    if (word === "-i") contexts.push("input");
    else if (rule?.takesValue) contexts.push(valueContext(base, rule.rewrite));
    else continue;
    i++;
  }
  return contexts.slice(0, words.length);
}

function valueContext(base: string, rewrite: string | undefined): WordContext {
  if (rewrite === "filter-graph") return "filter";
  if (rewrite === "output-path") return "output";
  if (DICTIONARIES.has(base)) return "dictionary";
  return base === "metadata" ? "metadata" : "value";
}

/** Characters that end or escape a filtergraph's quoting, or separate its filters, chains and labels. */
export const GRAPH_SYNTAX = /['"\\,;[\]]/g;
/**
 * Inside a filter's arguments, on top of GRAPH_SYNTAX: ':' separates and '=' names a filter's
 * options, '|' separates the items of list options (pan, amerge, select), '%' and '{ }' start
 * drawtext's text expansion (`%{eif:…}`, `%{metadata:…}`).
 */
const FILTER_SYNTAX = /['"\\,;[\]:=|%{}]/g;
/** In key=value option lists (-x264-params, -metadata's key, -map, flags): separators, names, flag signs, quoting. */
const VALUE_SYNTAX = /['"\\,;:=|+[\]%{}]/g;
/** Characters no URL holds as they are (RFC 3986): a value may fill a path or a query, never break the URL. */
const URL_SYNTAX = /[\s'"\\|{}<>^`]/g;
/** In a file name: '/' (a directory), ':' (a protocol), '%' (an image-sequence pattern) and anything else but letters, digits, '_', '.', '+', '-'. */
const FILE_SYNTAX = /[^\p{L}\p{N}_.+-]/gu;

/** What the placeholder at `index` of `word` must not hold, and why; undefined when any text (without control characters) may stand there. */
export function forbiddenIn(context: WordContext, word: TemplateWord, index: number, whole: boolean): { pattern: RegExp; why: string } | undefined {
  switch (context) {
    case "filter":
      return { pattern: FILTER_SYNTAX, why: `is ${whole ? "the whole" : "part of a"} filtergraph (${shown(word)}), where it would add filters, options or quoting` };
    case "dictionary":
      return { pattern: VALUE_SYNTAX, why: `is ${whole ? "the whole value" : "part of the value"} of an encoder's key=value list (${shown(word)}), where it would add or name options` };
    case "metadata":
      if (!whole && literalBefore(word, index).includes("=")) return undefined;
      return { pattern: VALUE_SYNTAX, why: `names the metadata key (${shown(word)}); only the text after '=' may be free` };
    case "value":
      return whole ? undefined : { pattern: VALUE_SYNTAX, why: `is part of an option's value (${shown(word)}), where it would add items, flags or options` };
    case "input":
      return whole ? undefined : { pattern: URL_SYNTAX, why: `is part of an input URL (${shown(word)})` };
    case "output":
      return { pattern: FILE_SYNTAX, why: `is ${whole ? "" : "part of "}an output file name (${shown(word)}), where it would choose a directory, a protocol or a numbered sequence` };
    default:
      return undefined;
  }
}

/**
 * Whether the placeholder at `index` is a filter's first argument and that filter reads one of
 * the task's inputs by its URL (`subtitles={{subs}}`): the policy takes that URL whole, so only
 * the graph's own syntax is refused there, when the value is one of the command's -i URLs.
 */
export function isInputFileArgument(word: TemplateWord, index: number): boolean {
  const match = /(?:^|[,;\]])\s*([a-z0-9_]+)(?:@[A-Za-z0-9_]+)?=$/.exec(literalBefore(word, index));
  const after = word.slice(index + 1).map((piece) => (typeof piece === "string" ? piece : "{{}}")).join("");
  if (!match || !/^(?:$|[:,;[])/.test(after)) return false;
  const rule = FILTER_RULES[match[1]!];
  return rule?.inputFile !== undefined && rule.order?.[0] === rule.inputFile;
}

function literalBefore(word: TemplateWord, index: number): string {
  return word.slice(0, index).map((piece) => (typeof piece === "string" ? piece : "{{}}")).join("");
}

function shown(word: TemplateWord): string {
  return `'${word.map((piece) => (typeof piece === "string" ? piece : `{{${piece.param}}}`)).join("")}'`;
}
