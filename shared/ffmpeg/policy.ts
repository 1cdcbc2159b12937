import type { UrlPolicyOptions } from "../net/url-policy";
import { type CheckContext, newNotes, type PolicyNotes } from "./context";
import { refuseLoopingValue } from "./checks";
import { checkInputUrl, checkOutputContainer, checkOutputName, inputFileName, outputMuxer } from "./files";
import { DASH_SEGMENT_NAME } from "./formats";
import type { PolicyLimits } from "./limits";
import { OPTIONS } from "./options";
import { hasControlCharacter, quote, refuse } from "./refusal";
import type { InputSpec, OptionUse, OutputSpec, ParsedCommand } from "./types";

/**
 * The rules a parsed command must pass before anything is fetched or run. Applied at the edge
 * on submission and again by the transcoder before it spawns ffmpeg. `stepInputs`: the inputs
 * that are earlier steps' outputs (./steps.ts), which are local files rather than URLs.
 */
export function enforcePolicy(parsed: ParsedCommand, limits: PolicyLimits, urlPolicy: UrlPolicyOptions = {}, stepInputs: ReadonlySet<string> = new Set()): ParsedCommand {
  checkCounts(parsed, limits);
  // An earlier step's output (./steps.ts): a reserved name only that module writes, never a URL.
  for (const input of parsed.inputs) if (!stepInputs.has(input.url)) checkInputUrl(input.url, urlPolicy);
  const notes = newNotes();
  const base = {
    limits,
    parsed,
    notes,
    inputUrls: parsed.inputs.map((input) => input.url),
    inputFormats: parsed.inputs.map((input) => input.options.findLast((use) => use.base === "f")?.value),
  };
  // Which option made a source endless decides which outputs and streams it can reach.
  const endless = noEndlessSources();
  const checkNoting = (use: OptionUse, context: CheckContext, note: (token: string) => void) => {
    const before = notes.unbounded.length;
    checkValue(use, context);
    notes.unbounded.slice(before).forEach(note);
  };
  for (const use of parsed.globals) checkNoting(use, { ...base, use, scope: "global" }, (token) => endless.graphs.push(token));
  parsed.inputs.forEach((owner, index) => {
    for (const use of owner.options) checkNoting(use, { ...base, use, scope: "input", owner }, (token) => endless.inputs.set(index, token));
  });
  for (const owner of parsed.outputs) {
    for (const use of owner.options) checkNoting(use, { ...base, use, scope: "output", owner }, (token) => endless.outputGraphs.push({ output: owner, kinds: graphKinds(use), token }));
  }
  checkExtraOutputs(notes, checkOutputNames(parsed));
  parsed.outputs.forEach((output, index) => checkBounded(parsed, output, index, endless));
  return parsed;
}

function checkCounts(parsed: ParsedCommand, limits: PolicyLimits): void {
  const extraInput = parsed.inputs[limits.maxInputs];
  if (extraInput) throw refuse("LIMIT_EXCEEDED", extraInput.url, `The command has ${parsed.inputs.length} inputs; the limit is ${limits.maxInputs}.`);
  const extraOutput = parsed.outputs[limits.maxOutputs];
  if (extraOutput) throw refuse("LIMIT_EXCEEDED", extraOutput.filename, `The command has ${parsed.outputs.length} outputs; the limit is ${limits.maxOutputs}.`);
}

/**
 * Output names: each a safe plain name, used once, not the name of an input, and saying what
 * its muxer writes. Returns the names in use.
 */
function checkOutputNames(parsed: ParsedCommand): Set<string> {
  const inputNames = new Set(parsed.inputs.map((input) => inputFileName(input.url)));
  const names = new Set<string>();
  checkDashSegments(parsed);
  for (const output of parsed.outputs) {
    const { filename } = output;
    checkOutputName(filename);
    checkOutputContainer(output);
    if (inputNames.has(filename)) throw refuse("OUTPUT_NOT_ALLOWED", filename, `The output ${quote(filename)} has the same name as an input; name it differently.`);
    if (names.has(filename)) throw refuse("OUTPUT_NOT_ALLOWED", filename, `The output ${quote(filename)} is named twice.`);
    names.add(filename);
  }
  return names;
}

/**
 * The dash muxer names its segments itself (DASH_SEGMENT_NAME), the same for every manifest:
 * one DASH output per task, and no other file of the task under one of those names.
 */
function checkDashSegments(parsed: ParsedCommand): void {
  const dash = parsed.outputs.filter((output) => outputMuxer(output) === "dash");
  if (dash.length > 1) throw refuse("OUTPUT_NOT_ALLOWED", dash[1]!.filename, `The command writes two DASH manifests (${quote(dash[0]!.filename)} and ${quote(dash[1]!.filename)}), whose segments would have the same names; submit one task for each.`);
  if (dash.length === 0) return;
  const named = [...parsed.outputs.map((output) => output.filename), ...parsed.outputs.flatMap((output) => output.options.filter((use) => OPTIONS[use.base]?.rewrite === "output-path").map((use) => use.value!))];
  const clash = named.find((name) => DASH_SEGMENT_NAME.test(name.replace(/%0?\d*d/g, "1".repeat(5))));
  if (clash) throw refuse("OUTPUT_NOT_ALLOWED", clash, `${quote(clash)} would have the name of a segment of the DASH manifest ${quote(dash[0]!.filename)} (init-stream<N>, chunk-stream<N>-<number>); name it differently.`);
}

function checkValue(use: OptionUse, context: CheckContext): void {
  if (use.value === undefined) return;
  const rule = OPTIONS[use.base]!;
  if (rule.rewrite !== "filter-graph" && hasControlCharacter(use.value)) {
    throw refuse("OPTION_VALUE_NOT_ALLOWED", use.value, `The value of '-${use.name}' contains control characters.`);
  }
  // Filter graphs are searched filter by filter, naming the filter (checks.ts filterGraph).
  if (rule.rewrite !== "filter-graph" && !rule.freeText) refuseLoopingValue(use.value, context);
  rule[context.scope]!(use.value, context);
}

/** Segment, list and playlist names an option makes ffmpeg write must not collide with outputs or each other. */
function checkExtraOutputs(notes: PolicyNotes, names: Set<string>): void {
  for (const name of notes.extraOutputs) {
    if (names.has(name)) throw refuse("OUTPUT_NOT_ALLOWED", name, `The file name ${quote(name)} is used for two different files.`);
    names.add(name);
  }
}


type StreamKind = "v" | "a" | "s" | "d";

const ALL_KINDS: readonly StreamKind[] = ["v", "a", "s", "d"];
/** lavfi filters make video and audio only, and a looped image one of those: only they can be endless. */
const ENDLESS_KINDS: readonly StreamKind[] = ["v", "a"];
const KIND_NAMES: Readonly<Record<StreamKind, string>> = { v: "video", a: "audio", s: "subtitles", d: "data" };

/** `-vn`, `-an`, `-sn`, `-dn`. */
const LEFT_OUT: Readonly<Record<string, StreamKind>> = { vn: "v", an: "a", sn: "s", dn: "d" };
/** Options that stop every stream of an output (only when written without a stream specifier). */
const STOPS_OUTPUT = new Set(["t", "to", "frames"]);
/** Options that stop every stream of one kind; `-frames:v:0` stops only one stream and is not counted. */
const STOPS_KIND: Readonly<Record<string, StreamKind>> = {
  "frames:v": "v", vframes: "v", "frames:a": "a", aframes: "a", "frames:s": "s", "frames:d": "d", dframes: "d",
};

/** Where the command makes media without end, named by the token that does. */
interface EndlessSources {
  /** `-loop` on an input, by input index: only the image demuxers take it (see pickedStreams). */
  inputs: Map<number, string>;
  /** Endless filters in `-filter_complex` graphs: any output of any such graph may be endless. */
  graphs: string[];
  /** Endless filters in an output's own `-vf`, `-af` or `-filter`, with the kinds of stream that graph filters. */
  outputGraphs: { output: OutputSpec; kinds: readonly StreamKind[]; token: string }[];
}

/** A stream an output may have. */
interface OutputStream {
  kinds: readonly StreamKind[];
  /** The source that may make it endless. */
  endless?: string;
  /**
   * Relied on by `-shortest`: an explicit, non-optional map of a kind not left out, or the audio
   * ffmpeg picks itself when only inputs that end can hold audio.
   */
  certain: boolean;
}

function noEndlessSources(): EndlessSources {
  return { inputs: new Map(), graphs: [], outputGraphs: [] };
}

/** The kinds a simple graph filters: `-vf` video, `-af` audio, `-filter:v` by its specifier. */
function graphKinds(use: OptionUse): readonly StreamKind[] {
  if (use.base === "vf") return ["v"];
  if (use.base === "af") return ["a"];
  const kind = streamKind(use.name.split(":")[1]);
  return kind === undefined ? ALL_KINDS : [kind];
}

/** The kind a stream specifier's first letter names (`v`, `V`, `a`, `s`, `d`), if it names one. */
function streamKind(letter: string | undefined): StreamKind | undefined {
  return ALL_KINDS.find((kind) => kind === letter?.toLowerCase());
}

/**
 * Looped images, sources without a duration and filters that repeat or stretch their input
 * make media without end; an output they may feed must stop every stream it may have. `-t`,
 * `-to` and `-frames` stop them all; `-frames:v` (`-vframes`) and `-frames:a` (`-aframes`)
 * stop one kind, so they count only when every endless stream is of a kind they stop — ffmpeg
 * finishes an output when all its streams have. `-shortest` ends the output when its first
 * stream ends, so it counts only when a stream that ends is in it: mapped explicitly from an
 * input that is not looped, or the audio ffmpeg picks when no looped input can hold audio.
 * This is a friendly early answer; the transcoder's wall-clock limit is what bounds a task.
 */
function checkBounded(parsed: ParsedCommand, output: OutputSpec, index: number, endless: EndlessSources): void {
  if (output.options.some((use) => STOPS_OUTPUT.has(use.name))) return;
  const stopped = new Set(output.options.map((use) => STOPS_KIND[use.name]).filter((kind) => kind !== undefined));
  const streams = streamsOf(parsed, output, index, endless);
  const open = streams.find((stream) => stream.endless !== undefined && stream.kinds.some((kind) => ENDLESS_KINDS.includes(kind) && !stopped.has(kind)));
  if (open === undefined) return;
  const shortest = output.options.some((use) => use.base === "shortest");
  if (shortest && streams.some((stream) => stream.certain && stream.endless === undefined)) return;
  const kinds = open.kinds.filter((kind) => ENDLESS_KINDS.includes(kind) && !stopped.has(kind)).map((kind) => KIND_NAMES[kind]);
  throw refuse(
    "LIMIT_EXCEEDED",
    open.endless!,
    `${quote(open.endless!)} can make media without end, and nothing stops the ${kinds.join(" or ")} of ${quote(output.filename)}: ` +
      "give that output '-t' or '-to', '-frames' for every kind of stream it has, or '-shortest' with a stream mapped from an input that ends (such as '-map 1:a').",
  );
}

/** The streams an output may have, from its maps or, without any, from ffmpeg's own choice. */
function streamsOf(parsed: ParsedCommand, output: OutputSpec, index: number, endless: EndlessSources): OutputStream[] {
  const maps = output.options.filter((use) => use.base === "map" && use.value !== undefined).map((use) => use.value!);
  const included = maps.filter((map) => !map.startsWith("-"));
  const leftOut = new Set(output.options.map((use) => LEFT_OUT[use.base]).filter((kind) => kind !== undefined));
  const loopedInput = endless.inputs.values().next().value;
  // A looped input may feed a -filter_complex, so any graph output may then be endless.
  const graphOutput: OutputStream = { kinds: ENDLESS_KINDS, endless: endless.graphs[0] ?? loopedInput, certain: false };
  // ffmpeg sends a -filter_complex output that has no label to the first output.
  const getsGraphOutputs = index === 0 && parsed.globals.some((use) => use.base === "filter_complex" || use.base === "lavfi");
  const streams: OutputStream[] =
    included.length === 0
      ? pickedStreams(parsed, output, endless, { leftOut, getsGraphOutputs })
      : included.map((map) => mappedStream(map, endless, leftOut, included.length < maps.length) ?? { ...graphOutput });
  if (getsGraphOutputs) streams.push({ ...graphOutput });
  for (const graph of endless.outputGraphs) {
    if (graph.output !== output) continue;
    for (const stream of streams) if (stream.kinds.some((kind) => graph.kinds.includes(kind))) stream.endless ??= graph.token;
  }
  return streams;
}

/**
 * Without `-map`, ffmpeg picks at most one stream of each kind across all inputs. `-loop` is an
 * option of the image demuxers only (any other input fails "Option loop not found"), and they
 * make one video stream — audio only when an audio decoder is forced on the input (img2dec.c).
 * So the audio picked then comes from an input that ends and `-shortest` may rely on it: the
 * still-picture-plus-song command. If no input holds audio after all, the task's time limit
 * stops it. ffmpeg picks no audio for a format without a default audio codec (a GIF), and a
 * -filter_complex output of a kind takes the place of its pick of that kind: the pick is not
 * relied on there.
 */
function pickedStreams(
  parsed: ParsedCommand,
  output: OutputSpec,
  endless: EndlessSources,
  { leftOut, getsGraphOutputs }: { leftOut: ReadonlySet<StreamKind>; getsGraphOutputs: boolean },
): OutputStream[] {
  const looped = [...endless.inputs];
  const loopedAudio = looped.find(([input]) => mayHoldAudioWhenLooped(parsed.inputs[input]!))?.[1];
  const audioThatEnds = parsed.inputs.some((input, index) => !endless.inputs.has(index) && !input.options.some((use) => use.base === "an"));
  const reliedOn = loopedAudio === undefined && audioThatEnds && !getsGraphOutputs && takesAudio(output);
  const picked = (kind: StreamKind): OutputStream => {
    if (kind === "v") return { kinds: [kind], endless: looped[0]?.[1], certain: false };
    if (kind === "a") return { kinds: [kind], endless: loopedAudio, certain: reliedOn };
    return { kinds: [kind], certain: false };
  };
  return ALL_KINDS.filter((kind) => !leftOut.has(kind)).map(picked);
}

/** Muxers with a default audio codec, for which ffmpeg picks an audio stream (av_guess_codec). */
const AUDIO_MUXERS: ReadonlySet<string> = new Set(["mp4", "mov", "ipod", "matroska", "webm", "avi", "flv", "mpegts", "hls", "dash", "mp3", "adts", "ogg", "oga", "opus", "wav", "flac"]);

function takesAudio(output: OutputSpec): boolean {
  const muxer = outputMuxer(output);
  return muxer !== undefined && AUDIO_MUXERS.has(muxer);
}

/** img2dec.c makes its one stream audio when `-c:a`/`-acodec` forces an audio decoder on the input. */
function mayHoldAudioWhenLooped(input: InputSpec): boolean {
  return input.options.some((use) => use.base === "acodec" || ((use.base === "c" || use.base === "codec") && streamKind(use.name.split(":")[1]) !== "v"));
}

/** `-map 1:a`, `-map 0`, `-map 0:v:0?`; undefined for a graph label (`-map [v]`). */
function mappedStream(map: string, endless: EndlessSources, leftOut: ReadonlySet<StreamKind>, negated: boolean): OutputStream | undefined {
  const match = /^(\d+)(?::([^?]*))?(\?)?$/.exec(map);
  if (!match) return undefined;
  const kind = streamKind(match[2]?.split(":")[0]);
  const kinds = kind === undefined ? ALL_KINDS : [kind];
  const certain = match[3] === undefined && !negated && kinds.every((each) => !leftOut.has(each));
  return { kinds, endless: endless.inputs.get(Number(match[1])), certain };
}
