import type { GraphContext } from "./context";
import { FILTER_RULES, REFUSED_FILTERS } from "./filter-catalogue";
import { type FrameBound, sameAsInput } from "./filter-geometry";
import {
  type FilterArgument,
  type FilterGraph,
  type FilterNode,
  parseFilterArguments,
  parseFilterGraph,
  serializeFilterArguments,
  serializeFilterGraph,
} from "./filter-graph";
import { FilterOptions } from "./filter-options";
import { type FilterRule, MAX_FILTER_PADS } from "./filter-rules";
import { quote, refuse } from "./refusal";
import type { VideoSize } from "./values";

// Applies the allow-list of filter-catalogue.ts to a graph, and renders the graph ffmpeg runs.

/**
 * Parses one filter graph and applies the filter allow-list and caps. Returns the graph so
 * callers need not parse it twice.
 */
export function checkFilterGraph(text: string, context: GraphContext): FilterGraph {
  const graph = parseFilterGraph(text);
  checkScalerFlags(graph);
  checkFrameSizes(checkedChains(graph, context));
  return graph;
}

/** The largest frame of the input stream a graph reads through `label` (`0:v`, `1`), or through an unlabelled first pad. */
export type InputFrames = (label?: string) => FrameBound;

/**
 * The run-time half of the frame-size check: once ffmpeg has described its inputs, a link
 * whose size follows from an input is bounded by that input's largest frame, and every frame
 * the graph makes is judged again.
 */
export function checkGraphFrames(text: string, context: GraphContext, inputFrames: InputFrames, settled: boolean): void {
  checkFrameSizes(checkedChains(parseFilterGraph(text), context), inputFrames, settled);
}

type CheckedChain = readonly { node: FilterNode; options: FilterOptions }[];

function checkedChains(graph: FilterGraph, context: GraphContext): CheckedChain[] {
  return graph.chains.map((chain) =>
    chain.map((node) => {
      context.notes.filters++;
      if (context.notes.filters > context.limits.maxFilters) {
        throw refuse("LIMIT_EXCEEDED", node.name, `The command uses more than ${context.limits.maxFilters} filters.`);
      }
      return { node, options: checkFilter(node, context) };
    }),
  );
}

/**
 * Follows the largest frame along every link (see filter-geometry.ts) and refuses a filter
 * that makes one past the caps. A label may be used before the chain that makes it, so the
 * walk repeats until no link learns more; a label no filter makes is an input stream, unknown
 * at submission. Once every input's size is known (`settled`, at run time), a last walk over
 * the settled links also refuses frames that follow from them but cannot be bounded.
 */
function checkFrameSizes(chains: readonly CheckedChain[], inputFrames?: InputFrames, settled = false): void {
  const frames = new Map<string, FrameBound>();
  let changed = true;
  for (let pass = 0; changed && pass <= chains.length; pass++) changed = walkFrames(chains, frames, inputFrames, false);
  if (settled) walkFrames(chains, frames, inputFrames, true);
}

/** One walk over every chain; says whether a link learned its frame. */
function walkFrames(chains: readonly CheckedChain[], frames: Map<string, FrameBound>, inputFrames: InputFrames | undefined, inputsKnown: boolean): boolean {
  const made = new Set(chains.flat().flatMap(({ node }) => node.outputs));
  const linked = (label: string) => (made.has(label) ? frames.get(label) : inputFrames?.(label));
  let changed = false;
  for (const chain of chains) {
    // Unlabelled outputs feed the next filter of the chain; a chain's first filter reads an input stream.
    let unlabelled: FrameBound[] = [inputFrames?.()];
    for (const { node, options } of chain) {
      const inputs = [...node.inputs.map(linked), ...unlabelled];
      const frame = (FILTER_RULES[node.name]!.frame ?? sameAsInput)(options, inputs, inputsKnown);
      if (frame && enlarges(frame, inputs)) options.checkFrame(frame);
      for (const label of node.outputs) {
        if (frame !== undefined && frames.get(label) === undefined) changed = true;
        frames.set(label, frame);
      }
      unlabelled = node.outputs.length === 0 ? new Array<FrameBound>(MAX_FILTER_PADS).fill(frame) : [];
    }
  }
  return changed;
}

/**
 * A frame no larger than one of the filter's inputs was judged where that input was made (an
 * input file's frames by the transcoder's input cap, which may be looser than the frame cap).
 */
function enlarges(frame: VideoSize, inputs: readonly FrameBound[]): boolean {
  return !inputs.some((input) => input !== undefined && frame.width <= input.width && frame.height <= input.height);
}

/**
 * graphparser.c hands the text after `sws_flags=` to every scaler in the graph as options
 * (`flags=` + the text), so `sws_flags=bicubic:w=99999;` would set every scaler's width.
 * Only the flags themselves are allowed.
 */
function checkScalerFlags(graph: FilterGraph): void {
  const flags = graph.swsFlags;
  if (flags !== undefined && !/^[A-Za-z0-9_+-]*$/.test(flags)) {
    throw refuse("FILTER_NOT_ALLOWED", `sws_flags=${flags}`, `The graph's 'sws_flags=' takes scaler flags only, such as bicubic+accurate_rnd; ${quote(flags)} would set other options on every scaler.`);
  }
}

function checkFilter(node: FilterNode, context: GraphContext): FilterOptions {
  const rule = FILTER_RULES[node.name];
  if (!rule) throw filterRefused(node.name, REFUSED_FILTERS[node.name] ?? "is not on the list of allowed filters");
  const options = new FilterOptions(node.name, resolveArguments(node, rule, context), context);
  for (const [name, why] of Object.entries(rule.refused ?? {})) {
    if (options.has(name)) throw filterRefused(node.name, `with '${name}=' ${why}`);
  }
  if (rule.inputFile !== undefined) checkInputFile(options, rule.inputFile, rule.inputKind, context);
  options.cap("threads", context.limits.maxThreads, "threads");
  if (!rule.order?.includes("size")) options.capSizeIfSize("size");
  if (!rule.order?.includes("s")) options.capSizeIfSize("s");
  for (const [name, measure] of Object.entries(rule.measures ?? {})) measure(options, name);
  rule.check?.(options);
  return options;
}

/** Maps each argument to its option name, through position and aliases. */
function resolveArguments(node: FilterNode, rule: FilterRule, context: GraphContext): Map<string, string> {
  const resolved = new Map<string, string>();
  const constrained = rule.refused !== undefined || rule.inputFile !== undefined || rule.check !== undefined || rule.measures !== undefined || rule.order !== undefined;
  argumentsOf(node, rule, context.inputUrls).forEach((argument, index) => {
    if (argument.key?.startsWith("/")) {
      throw filterRefused(node.name, `with ${quote(argument.key)}: a '/' before an option name makes ffmpeg read the value from a file`);
    }
    if (argument.key === undefined && !constrained) return;
    const name = argument.key ?? rule.order?.[index];
    if (name === undefined) {
      throw refuse("FILTER_NOT_ALLOWED", node.name, `Give the arguments of '${node.name}' after the first ${rule.order?.length ?? 0} as key=value (${quote(argument.value)} has no name).`);
    }
    const option = rule.aliases?.[name] ?? name;
    // ffmpeg keeps the last of two settings; refusing repeats keeps every check on the value that counts.
    if (resolved.has(option)) throw filterRefused(node.name, `sets '${option}' twice`);
    resolved.set(option, argument.value);
  });
  return resolved;
}

/**
 * The filter's arguments. For a filter that names an input file, a leading input URL is taken
 * whole even though its `:` would split it for ffmpeg (`subtitles=https://host/subs.srt` is
 * what users write); buildArgv replaces it with a local path, properly escaped, so ffmpeg never
 * sees the URL.
 */
function argumentsOf(node: FilterNode, rule: FilterRule, inputUrls: readonly string[]): FilterArgument[] {
  const args = node.args ?? "";
  if (rule.inputFile !== undefined && rule.order?.[0] === rule.inputFile) {
    const url = inputUrls.find((candidate) => args === candidate || args.startsWith(`${candidate}:`));
    if (url !== undefined) return [{ value: url }, ...parseFilterArguments(args.slice(url.length + 1))];
  }
  const parsed = parseFilterArguments(args);
  let keyed = false;
  for (const argument of parsed) {
    if (argument.key !== undefined) keyed = true;
    else if (keyed) throw refuse("FILTER_GRAPH_INVALID", node.name, `In '${node.name}', the bare argument ${quote(argument.value)} follows a key=value one; ffmpeg only takes bare arguments first.`);
  }
  return parsed;
}

function checkInputFile(options: FilterOptions, name: string, kind: FilterRule["inputKind"], context: GraphContext): void {
  const file = options.get(name);
  if (file === undefined) throw filterRefused(options.filter, `needs '${name}=' naming one of the task's inputs`);
  if (!context.inputUrls.includes(file)) {
    throw filterRefused(options.filter, `can only read one of the task's own inputs; ${quote(file)} is not one of its '-i' URLs`);
  }
  if (kind === undefined) return;
  const extensions = [...kind.extensions].map((extension) => `.${extension}`).join(", ");
  if (!kind.extensions.has(urlExtension(file))) throw filterRefused(options.filter, `reads only subtitle files (${extensions}); ${quote(file)} does not end in one`);
  context.inputUrls.forEach((url, index) => {
    const forced = context.inputFormats[index];
    if (url === file && forced !== undefined && !kind.formats.has(forced)) {
      throw filterRefused(options.filter, `reads only subtitle formats (${[...kind.formats].join(", ")}); its input is read with '-f ${forced}'`);
    }
  });
}

function urlExtension(url: string): string {
  const path = new URL(url).pathname;
  const dot = path.lastIndexOf(".");
  return dot === -1 || path.lastIndexOf("/") > dot ? "" : path.slice(dot + 1).toLowerCase();
}

function filterRefused(filter: string, why: string): Error {
  return refuse("FILTER_NOT_ALLOWED", filter, `The filter '${filter}' ${why}.`);
}

/**
 * The graph ffmpeg will run: re-written from what was checked, with every input-file option
 * (`subtitles=`) pointed at the local copy of that input.
 */
export function renderFilterGraph(text: string, localPathOf: (url: string) => string, inputUrls: readonly string[]): string {
  const graph = parseFilterGraph(text);
  for (const node of graph.chains.flat()) {
    const rule = FILTER_RULES[node.name];
    if (rule?.inputFile !== undefined) node.args = withLocalInput(node, rule, rule.inputFile, localPathOf, inputUrls);
  }
  return serializeFilterGraph(graph);
}

function withLocalInput(node: FilterNode, rule: FilterRule, name: string, localPathOf: (url: string) => string, inputUrls: readonly string[]): string {
  const args = argumentsOf(node, rule, inputUrls).map((argument, index) => {
    const option = argument.key === undefined ? rule.order?.[index] : (rule.aliases?.[argument.key] ?? argument.key);
    return option === name ? { ...argument, value: localPathOf(argument.value) } : argument;
  });
  return serializeFilterArguments(args);
}
