import type { CheckContext } from "./context";
import { findLoopingFunction } from "./expression";
import { checkOutputName } from "./files";
import { parseDictionary } from "./filter-graph";
import { checkFilterGraph } from "./filters";
import type { PolicyLimits } from "./limits";
import { hasControlCharacter, quote, refuse } from "./refusal";
import { parseDecimal, parseDuration, parseFrameRate, parseInteger, parseQuantity, parseVideoSize } from "./values";

/**
 * Checks of option values, used by the option table. Each throws an AppError naming the
 * value; a value a check does not understand is refused, never passed on unchecked.
 */
export type ValueCheck = (value: string, context: CheckContext) => void;

type Limit = number | ((limits: PolicyLimits) => number);

function limitOf(limit: Limit, limits: PolicyLimits): number {
  return typeof limit === "number" ? limit : limit(limits);
}

function invalid(value: string, context: CheckContext, expected: string): Error {
  return refuse("OPTION_VALUE_NOT_ALLOWED", value, `'-${context.use.name}' takes ${expected}, not ${quote(value)}.`);
}

function overLimit(value: string, context: CheckContext, why: string): Error {
  return refuse("LIMIT_EXCEEDED", value, `'-${context.use.name} ${value}' ${why}.`);
}

export const noValue: ValueCheck = () => {};

export function matching(pattern: RegExp, expected: string): ValueCheck {
  return (value, context) => {
    if (!pattern.test(value)) throw invalid(value, context, expected);
  };
}

/** A name or keyword: no paths, URLs, spaces or separators. */
export const word = matching(/^[A-Za-z0-9_.+-]{1,64}$/, "a single word (letters, digits, '_.+-')");

/** `+flag-flag` lists (`-movflags +faststart`, `-fflags +genpts`). */
export const flagList = matching(/^[+-]?[A-Za-z0-9_]{1,32}([+-][A-Za-z0-9_]{1,32}){0,15}$/, "a list of flags such as +faststart");

export function oneOf(...allowed: string[]): ValueCheck {
  const set = new Set(allowed);
  return (value, context) => {
    if (!set.has(value)) throw invalid(value, context, `one of ${allowed.join(", ")}`);
  };
}

export function namedIn(set: ReadonlySet<string>, what: string): ValueCheck {
  return (value, context) => {
    if (!set.has(value)) throw invalid(value, context, `${what}: one of ${[...set].join(", ")}`);
  };
}

/** Flags drawn from a fixed set, in ffmpeg's `+a+b` syntax. */
export function flagsIn(...allowed: string[]): ValueCheck {
  const set = new Set(allowed);
  return (value, context) => {
    const names = value.split(/[+-]/).filter((name) => name !== "");
    if (!/^[+-]?[a-z0-9_]+([+-][a-z0-9_]+)*$/.test(value) || names.some((name) => !set.has(name))) {
      throw invalid(value, context, `flags from ${allowed.join(", ")}`);
    }
  };
}

export function integer(min: number, max: Limit, what = "a whole number"): ValueCheck {
  return (value, context) => {
    const number = parseInteger(value);
    if (number === undefined || number < min) throw invalid(value, context, `${what} from ${min}`);
    const cap = limitOf(max, context.limits);
    if (number > cap) throw overLimit(value, context, `is over the limit of ${cap}`);
  };
}

export function decimal(min: number, max: number): ValueCheck {
  return (value, context) => {
    const number = parseDecimal(value);
    if (number === undefined || number < min || number > max) throw invalid(value, context, `a number from ${min} to ${max}`);
  };
}

/** ffmpeg's time syntax (`90`, `1.5`, `00:01:30`, `500ms`), any length: seek positions. */
export const timePosition: ValueCheck = (value, context) => {
  if (parseDuration(value) === undefined) throw invalid(value, context, "a time such as 90, 1.5 or 00:01:30");
};

/** A duration or end time, capped so no output runs longer than the plan allows. */
export const cappedDuration: ValueCheck = (value, context) => {
  const seconds = parseDuration(value);
  if (seconds === undefined) throw invalid(value, context, "a duration such as 90, 1.5 or 00:01:30");
  if (seconds > context.limits.maxDurationSeconds) {
    throw overLimit(value, context, `is longer than the limit of ${context.limits.maxDurationSeconds} seconds`);
  }
};

/** `-sseof` counts back from the end, so it must be negative. */
export const fromEnd: ValueCheck = (value, context) => {
  const seconds = parseDuration(value);
  if (seconds === undefined || seconds > 0) throw invalid(value, context, "a negative time such as -5");
};

export const frameCount = integer(0, (limits) => limits.maxFrames, "a number of frames");

export const quantity: ValueCheck = (value, context) => {
  if (parseQuantity(value) === undefined) throw invalid(value, context, "an amount such as 2500k or 2M");
};

export const videoSize: ValueCheck = (value, context) => {
  const size = parseVideoSize(value);
  if (!size) throw invalid(value, context, "a size such as 1280x720 or hd720");
  const { maxWidth, maxHeight, maxPixels } = context.limits;
  if (size.width > maxWidth || size.height > maxHeight || size.width * size.height > maxPixels) {
    throw overLimit(value, context, `is larger than the limit of ${maxWidth}x${maxHeight} and ${maxPixels} pixels`);
  }
};

export const frameRate: ValueCheck = (value, context) => {
  const rate = parseFrameRate(value);
  if (rate === undefined || rate <= 0) throw invalid(value, context, "a frame rate such as 25, 29.97 or 30000/1001");
  if (rate > context.limits.maxFrameRate) throw overLimit(value, context, `is over the limit of ${context.limits.maxFrameRate} frames per second`);
};

export const threadCount: ValueCheck = (value, context) => {
  if (value !== "auto") integer(0, (limits) => limits.maxThreads, "a number of threads")(value, context);
};

/** Free text such as a title: anything printable, bounded. */
export function text(maxLength: number): ValueCheck {
  return (value, context) => {
    if (hasControlCharacter(value) || value.length > maxLength) throw invalid(value, context, `text of at most ${maxLength} characters without control characters`);
  };
}

export const metadataEntry: ValueCheck = (value, context) => {
  text(1024)(value, context);
  if (!/^[A-Za-z0-9_.:-]{1,64}=/.test(value)) throw invalid(value, context, "key=value, such as title=Holidays");
};

/** `-map 0:v:0`, `-map -0:s`, `-map 1:a?`, `-map [label]`: an input that exists, or a filter output label. */
export const streamMap: ValueCheck = (value, context) => {
  if (/^\[[A-Za-z0-9_:.#-]{1,64}\]$/.test(value)) return;
  const match = /^-?(\d{1,3})(:[A-Za-z0-9_:#.-]{0,64})?\??$/.exec(value);
  if (!match) throw invalid(value, context, "a stream selection such as 0:v:0, 1:a?, -0:s or [label]");
  if (Number(match[1]) >= context.parsed.inputs.length) {
    throw invalid(value, context, `a stream of an existing input (the command has ${context.parsed.inputs.length}, numbered from 0)`);
  }
};

/** `-map_metadata 0`, `-map_metadata -1`, `-map_metadata 0:s:0`. */
export const metadataMap = matching(/^-?\d{1,3}(:[A-Za-z0-9_:.]{0,32})?$/, "an input number with an optional specifier, such as 0, -1 or 0:s:0");

/** A comma-separated list of allowed names (`-bsf:v h264_mp4toannexb,dump_extra`). */
export function listIn(set: ReadonlySet<string>, what: string): ValueCheck {
  return (value, context) => {
    for (const name of value.split(",")) {
      if (!set.has(name)) throw invalid(value, context, `${what}: one of ${[...set].join(", ")}`);
    }
  };
}

/**
 * Encoder parameter strings (`-x264-params keyint=48:scenecut=0`), read whole as ffmpeg reads
 * them (see parseDictionary): every key must be in the allowed set — encoders have keys that
 * read or write files (`stats=`, `qpfile=`, `csv=`, `analysis-save=`...) or spawn threads past
 * our caps (`pools=`) — each key is set once, and every value is a plain word, so no `=`, `:`
 * or path can hide a second key or a file name inside a value.
 */
export function encoderParams(keys: ReadonlySet<string>): ValueCheck {
  return (value, context) => checkEncoderEntries(parseDictionary(value), keys, value, context);
}

/**
 * `-x264opts`, which libx264.c reads with `sscanf("%[^:=]=%[^:]")` per `:`-separated piece,
 * without escapes; a key without a value means `1`.
 */
export function x264Options(keys: ReadonlySet<string>): ValueCheck {
  return (value, context) => {
    const entries = value.split(":").map((piece) => {
      const match = /^([^:=]+)(?:=(.*))?$/.exec(piece);
      return match ? { key: match[1]!, value: match[2] ?? "1" } : undefined;
    });
    checkEncoderEntries(entries.includes(undefined) ? undefined : (entries as { key: string; value: string }[]), keys, value, context);
  };
}

function checkEncoderEntries(entries: readonly { key?: string; value: string }[] | undefined, keys: ReadonlySet<string>, value: string, context: CheckContext): void {
  if (entries === undefined) throw invalid(value, context, "key=value pairs separated by ':', such as keyint=48:scenecut=0");
  const seen = new Set<string>();
  for (const entry of entries) {
    const key = entry.key ?? "";
    if (!keys.has(key)) throw invalid(value, context, `parameters from ${[...keys].join(", ")} (not ${quote(key)})`);
    if (seen.has(key)) throw invalid(value, context, `each parameter once (${quote(key)} is set twice)`);
    seen.add(key);
    if (!/^[A-Za-z0-9.,()+_-]{1,128}$/.test(entry.value)) throw invalid(value, context, `plain values (not ${quote(entry.value)} for ${quote(key)})`);
  }
}

/** A filter graph (`-vf`, `-af`, `-filter_complex`...): parsed and checked filter by filter. */
export const filterGraph: ValueCheck = (value, context) => {
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value)) throw invalid(value, context, "a filter graph without control characters");
  const graph = checkFilterGraph(value, context);
  for (const node of graph.chains.flat()) refuseLoopingArguments(node.name, node.args ?? "");
};

/**
 * Any option of any filter may be an expression: numeric options and `enable=` are read by
 * av_expr_parse, string ones such as setpts's or drawtext's `%{eif:…}` evaluate theirs per
 * frame. So every argument is searched, whichever option it sets.
 */
function refuseLoopingArguments(filter: string, args: string): void {
  const looping = findLoopingFunction(args);
  if (looping !== undefined) {
    throw refuse("FILTER_NOT_ALLOWED", filter, `The filter '${filter}' uses '${looping}()', which can run without end; write the expression without loops.`);
  }
}

/** Any other option value ffmpeg may evaluate as an expression (`-force_key_frames expr:…`, numeric codec options). */
export const refuseLoopingValue: ValueCheck = (value, context) => {
  const looping = findLoopingFunction(value);
  if (looping !== undefined) {
    throw refuse("OPTION_VALUE_NOT_ALLOWED", value, `The value of '-${context.use.name}' uses '${looping}()', which ffmpeg evaluates without end; write the expression without loops.`);
  }
};

/** A file ffmpeg writes on the service's behalf, placed in the output directory by buildArgv. */
export const outputFile: ValueCheck = (value, context) => {
  checkOutputName(value);
  context.notes.extraOutputs.push(value);
};

/** A file the muxer writes next to its playlist (`-master_pl_name`): a plain name keeps it in the output directory. */
export const siblingFile = outputFile;

/** `-loop 1` before an image input repeats it forever, so some output must stop the command. */
export const imageLoop: ValueCheck = (value, context) => {
  const loops = parseInteger(value);
  if (loops === undefined || loops < 0) throw invalid(value, context, "0 or 1");
  const bounded = context.owner?.options.some((use) => use.base === "t" || use.base === "to") ?? false;
  if (loops !== 0 && !bounded) context.notes.unbounded.push(`-${context.use.name}`);
};

/** `-stream_loop N` replays an input N more times; -1 would replay it forever. */
export const streamLoop: ValueCheck = (value, context) => {
  const loops = parseInteger(value);
  if (loops === undefined) throw invalid(value, context, "a number of repeats");
  if (loops < 0) throw overLimit(value, context, "repeats the input forever; give a number of repeats");
  if (loops > context.limits.maxLoops) throw overLimit(value, context, `is over the limit of ${context.limits.maxLoops} repeats`);
};
