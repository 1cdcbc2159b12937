import { quote, refuse } from "./refusal";

/**
 * A reader and writer for ffmpeg's filtergraph syntax, faithful to libavfilter's
 * graphparser.c and libavutil's `av_get_token` / `av_opt_get_key_value` (ffmpeg 5.1).
 *
 * The policy checks what this reader sees, and `buildArgv` hands ffmpeg what the writer
 * produces from it, never the user's original text: whatever quirk of quoting a graph relies
 * on, ffmpeg runs exactly what was checked.
 */

/** One filter: `[in1][in2] name@id=args [out]`. */
export interface FilterNode {
  inputs: string[];
  /** The filter's name, without any `@instance` suffix. */
  name: string;
  /** The `@instance` suffix as written, or "". */
  instance: string;
  /** Its arguments after the graph level of quoting is removed; undefined when there is no `=`. */
  args?: string;
  outputs: string[];
}

export interface FilterGraph {
  /** A leading `sws_flags=...;` (the part after `sws_flags=`). */
  swsFlags?: string;
  /** Chains are separated by `;`, filters within a chain by `,`. */
  chains: FilterNode[][];
}

/** One argument of a filter: `key=value`, or a bare value that ffmpeg assigns by position. */
export interface FilterArgument {
  key?: string;
  value: string;
}

const WHITESPACE = " \n\t\r";
const FILTER_NAME = /^([a-z0-9_]+)(@[A-Za-z0-9_]+)?$/;
const LABEL = /^[A-Za-z0-9_:.#-]{1,64}$/;
const SWS_FLAGS = /^[A-Za-z0-9_+\-.:=]*$/;

export function parseFilterGraph(text: string): FilterGraph {
  const reader = new Reader(text);
  reader.skipWhitespace();
  const graph: FilterGraph = { chains: [[]] };
  if (reader.rest().startsWith("sws_flags=")) graph.swsFlags = reader.readSwsFlags();
  for (;;) {
    reader.skipWhitespace();
    const node = reader.readFilter();
    graph.chains[graph.chains.length - 1]!.push(node);
    reader.skipWhitespace();
    const separator = reader.next();
    if (separator === undefined) return graph;
    if (separator === ";") graph.chains.push([]);
    else if (separator !== ",") throw invalid(text, `unexpected ${quote(separator)} after the filter '${node.name}'`);
  }
}

export function serializeFilterGraph(graph: FilterGraph): string {
  const prefix = graph.swsFlags === undefined ? "" : `sws_flags=${graph.swsFlags};`;
  return prefix + graph.chains.map((chain) => chain.map(serializeNode).join(",")).join(";");
}

function serializeNode(node: FilterNode): string {
  const labels = (names: string[]) => names.map((name) => `[${name}]`).join("");
  const args = node.args === undefined ? "" : `=${escape(node.args, "[],;")}`;
  return `${labels(node.inputs)}${node.name}${node.instance}${args}${labels(node.outputs)}`;
}

/** Splits a filter's arguments as `process_options` does: `:`-separated, each `key=value` or a bare value. */
export function parseFilterArguments(args: string): FilterArgument[] {
  const result: FilterArgument[] = [];
  let rest = args;
  while (rest.length > 0) {
    const key = /^[ \n\t\r]*([A-Za-z0-9_\-/.]*)[ \n\t\r]*=/.exec(rest);
    if (key) rest = rest.slice(key[0].length);
    const { token, end } = getToken(rest, 0, ":");
    result.push(key ? { key: key[1]!, value: token } : { value: token });
    rest = rest.slice(end < rest.length ? end + 1 : end);
  }
  return result;
}

export function serializeFilterArguments(args: readonly FilterArgument[]): string {
  return args.map((arg) => (arg.key === undefined ? "" : `${arg.key}=`) + escape(arg.value, ":")).join(":");
}

/**
 * libavutil's `av_dict_parse_string(text, "=", ":")`, which reads AV_OPT_TYPE_DICT options
 * such as `-x264-params`: `key=value` pairs separated by `:`, each key and value an
 * `av_get_token` (so `\:` and `'a:b'` put a `:` inside a value). Returns undefined where
 * ffmpeg fails: a pair without `=` or with an empty key or value.
 */
export function parseDictionary(text: string): FilterArgument[] | undefined {
  const entries: FilterArgument[] = [];
  let position = 0;
  while (position < text.length) {
    const key = getToken(text, position, "=");
    if (key.token === "" || text[key.end] !== "=") return undefined;
    const value = getToken(text, key.end + 1, ":");
    if (value.token === "") return undefined;
    entries.push({ key: key.token, value: value.token });
    position = value.end < text.length ? value.end + 1 : value.end;
  }
  return entries;
}

/** Backslash-escapes what `av_get_token` would otherwise read as quoting, a terminator or trimmable whitespace. */
function escape(text: string, terminators: string): string {
  let out = "";
  for (const c of text) out += c === "\\" || c === "'" || terminators.includes(c) || WHITESPACE.includes(c) ? `\\${c}` : c;
  return out;
}

/**
 * libavutil's `av_get_token`: skips leading whitespace, reads up to an unquoted, unescaped
 * terminator, removes one level of `\` escapes and `'...'` quotes, and trims trailing
 * whitespace that was neither escaped nor quoted. An unclosed quote runs to the end.
 */
function getToken(text: string, start: number, terminators: string): { token: string; end: number } {
  let i = start;
  while (i < text.length && WHITESPACE.includes(text[i]!)) i++;
  let out = "";
  let keep = 0;
  while (i < text.length && !terminators.includes(text[i]!)) {
    const c = text[i++]!;
    if (c === "\\" && i < text.length) {
      out += text[i++];
      keep = out.length;
    } else if (c === "'") {
      while (i < text.length && text[i] !== "'") out += text[i++];
      if (i < text.length) {
        i++;
        keep = out.length;
      }
    } else {
      out += c;
    }
  }
  let length = out.length;
  while (length > keep && WHITESPACE.includes(out[length - 1]!)) length--;
  return { token: out.slice(0, length), end: i };
}

class Reader {
  private position = 0;
  constructor(private readonly text: string) {}

  rest(): string {
    return this.text.slice(this.position);
  }

  next(): string | undefined {
    return this.text[this.position++];
  }

  skipWhitespace(): void {
    while (this.position < this.text.length && WHITESPACE.includes(this.text[this.position]!)) this.position++;
  }

  /** graphparser.c keeps everything up to the first `;`, unparsed. */
  readSwsFlags(): string {
    const end = this.text.indexOf(";", this.position);
    if (end === -1) throw invalid(this.text, "'sws_flags=' must end with ';'");
    const flags = this.text.slice(this.position + "sws_flags=".length, end);
    if (!SWS_FLAGS.test(flags)) throw invalid(this.text, `the scaler flags ${quote(flags)} are not a list of flags`);
    this.position = end + 1;
    return flags;
  }

  readFilter(): FilterNode {
    const inputs = this.readLabels();
    const nameToken = this.read("=,;[");
    const match = FILTER_NAME.exec(nameToken);
    if (!match) throw invalid(this.text, nameToken === "" ? "a filter name is missing" : `${quote(nameToken)} is not a filter name`);
    const node: FilterNode = { inputs, name: match[1]!, instance: match[2] ?? "", outputs: [] };
    if (this.text[this.position] === "=") {
      this.position++;
      node.args = this.read("[],;");
    }
    node.outputs = this.readLabels();
    return node;
  }

  private read(terminators: string): string {
    const { token, end } = getToken(this.text, this.position, terminators);
    this.position = end;
    return token;
  }

  private readLabels(): string[] {
    const labels: string[] = [];
    while (this.text[this.position] === "[") {
      this.position++;
      const label = this.read("]");
      if (this.next() !== "]") throw invalid(this.text, `the label '[${label}' is not closed with ']'`);
      if (!LABEL.test(label)) throw invalid(this.text, `the label ${quote(`[${label}]`)} may only use letters, digits and '_:.#-'`);
      labels.push(label);
      this.skipWhitespace();
    }
    return labels;
  }
}

function invalid(graph: string, why: string): Error {
  return refuse("FILTER_GRAPH_INVALID", graph, `The filter graph ${quote(graph)} cannot be read: ${why}.`);
}
