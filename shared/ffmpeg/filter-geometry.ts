import { between, exactly, type Range, type Variables } from "./expression";
import type { FilterOptions } from "./filter-options";
import type { PolicyLimits } from "./limits";
import { parseVideoSize, type VideoSize } from "./values";

/**
 * Frame sizes through a graph. Every frame a filter makes must fit the caps, not only the
 * frames that reach an output (the transcoder sees only those): a filter that enlarges or
 * combines frames (`pad`, `tile`, `hstack`, `xstack`...) is judged on its own output, even when
 * a later `scale` shrinks it. Each link carries the largest frame the command itself decides;
 * at submission a link whose size follows from an input file is unknown, and the transcoder
 * walks the graph again once ffmpeg has described its inputs (graph-frames.ts).
 */
export type FrameBound = Frame | undefined;

/** A frame's size: the real one if `exact` (an input's, as ffmpeg reported it), else the largest it can be. */
export interface Frame extends VideoSize {
  exact?: boolean;
}

/**
 * The largest frame a filter outputs, from its options and its inputs' largest frames.
 * `inputsKnown` says the graph's input streams have their real sizes (at run time): a frame
 * that follows from them but cannot be bounded is then refused rather than left unknown.
 */
export type FrameRule = (options: FilterOptions, inputs: readonly FrameBound[], inputsKnown: boolean) => FrameBound;

/**
 * What a size expression may name: the input's size (the link's largest frame where known,
 * else anything up to the caps, which the transcoder's probe enforces on inputs), its aspect
 * ratio, chroma subsampling, and the frame number and time. The sample aspect ratio is taken
 * as 1: an input with non-square pixels (`iw*sar`) is judged by the transcoder, which checks
 * every output's real frame size in ffmpeg's stream information.
 */
export function frameVariables(limits: PolicyLimits, input?: VideoSize): Variables {
  const width = between(1, input?.width ?? limits.maxWidth);
  const height = between(1, input?.height ?? limits.maxHeight);
  const aspect = between(1 / height.hi, width.hi);
  const subsampling = between(1, 4);
  return {
    iw: width, in_w: width, ih: height, in_h: height, a: aspect, dar: aspect, sar: exactly(1),
    hsub: subsampling, vsub: subsampling, ohsub: subsampling, ovsub: subsampling,
    n: between(0, limits.maxFrames), t: between(0, limits.maxDurationSeconds),
  };
}

/** Filters that keep their first input's frame size, exactly (the default for every allowed filter without a rule). */
export const sameAsInput: FrameRule = (_options, inputs) => inputs[0];

/** A size option with ffmpeg's default (sources, visualisations, zoompan). */
export function sizeOption(name: string, fallback: string): FrameRule {
  return (options) => {
    const size = parseVideoSize(options.get(name) ?? fallback);
    return size && { ...size, exact: true };
  };
}

/**
 * Width and height expressions (scale, zscale), or a lone width that is a size
 * (`scale=hd720`). A value that is never positive means "from the input" (0) or "keep the
 * aspect ratio" (-1, -2): the first is the input's width or height, the second depends on the
 * input's shape and is unknown here.
 */
export function expressedSize(width: string, height: string): FrameRule {
  return (options, [input]) => {
    if (options.has(width) && !options.has(height)) {
      const size = parseVideoSize(options.get(width)!);
      if (size) return size;
    }
    const sizeFrom = (from: VideoSize | undefined): FrameBound => {
      const ranges = options.dimensions(width, height, frameVariables(options.limits, from));
      const side = (name: string, range: Range, inputSide: number | undefined): number | undefined => {
        if (!options.has(name) || (range.lo === 0 && range.hi === 0)) return inputSide;
        return range.lo > 0 && Number.isFinite(range.hi) ? Math.ceil(range.hi) : undefined;
      };
      const w = side(width, ranges.width, from?.width);
      const h = side(height, ranges.height, from?.height);
      return w === undefined || h === undefined ? undefined : { width: w, height: h };
    };
    return input ? sizeFrom(input) : unlessInputDecides(sizeFrom);
  };
}

/** scale's force_original_aspect_ratio, by name or number (vf_scale.c). */
const ASPECT_FITS: Readonly<Record<string, "disable" | "decrease" | "increase">> = {
  disable: "disable", 0: "disable", decrease: "decrease", 1: "decrease", increase: "increase", 2: "increase",
};

export function aspectFit(options: FilterOptions): "disable" | "decrease" | "increase" {
  const value = options.get("force_original_aspect_ratio");
  if (value === undefined) return "disable";
  const fit = ASPECT_FITS[value];
  if (fit === undefined) throw options.invalid("force_original_aspect_ratio", "disable, decrease or increase");
  return fit;
}

/**
 * scale: the width and height expressions, then `force_original_aspect_ratio` fits the frame
 * inside (`decrease`) or around (`increase`) that box with the input's shape. `decrease` stays
 * within the box; `increase` grows a side by the input's aspect ratio (an 8192x1 input scaled
 * to cover 100x100 is 819200 wide), so it is bounded only from the input's exact size: unknown
 * at submission, computed at run time from the size ffmpeg reports, and refused where the
 * frame before it is only bounded (after a crop, say), since its shape is then unknown.
 */
export const scaled: FrameRule = (options, inputs, inputsKnown) => {
  const [input] = inputs;
  const size = input?.exact ? exactScale(options, input) : constantScale(options);
  if (size) return size;
  if (aspectFit(options) !== "increase") return expressedSize("w", "h")(options, inputs, inputsKnown);
  if (!inputsKnown) return undefined;
  throw options.limit("force_original_aspect_ratio", "grows the frame by the aspect ratio of a frame whose exact size is not known here; scale to cover straight from the input or from a fixed size");
};

/** A size given as a name (`size=hd720`, `scale=1280x720`). */
function namedSize(options: FilterOptions): VideoSize | undefined {
  if (options.has("size")) return parseVideoSize(options.get("size")!);
  return options.has("w") && !options.has("h") ? parseVideoSize(options.get("w")!) : undefined;
}

/** scale's frame when the command alone decides it: constant sides, no aspect fit. */
function constantScale(options: FilterOptions): Frame | undefined {
  if (aspectFit(options) !== "disable") return undefined;
  const named = namedSize(options);
  if (named) return { ...named, exact: true };
  const { width, height } = options.dimensions("w", "h", frameVariables(options.limits));
  const point = (name: string, range: Range) => (options.has(name) && range.lo === range.hi && Math.trunc(range.lo) > 0 ? Math.trunc(range.lo) : undefined);
  const [w, h] = [point("w", width), point("h", height)];
  return w === undefined || h === undefined ? undefined : { width: w, height: h, exact: true };
}

/**
 * The frame scale makes from an input of known size, as scale_eval.c computes it: each
 * expression truncated (0 is the input's side), a negative side kept to the input's aspect
 * ratio (-n: divisible by n), then the aspect fit and `force_divisible_by`. Undefined where an
 * expression depends on more than the input's size (frame number, pixel shape).
 */
function exactScale(options: FilterOptions, input: VideoSize): Frame | undefined {
  const evaluated = namedSize(options) ?? exactDimensions(options, input);
  if (evaluated === undefined) return undefined;
  const rescale = (a: number, b: number, c: number) => Math.round((a * b) / c);
  let { width, height } = evaluated;
  const [widthFactor, heightFactor] = [width < -1 ? -width : 1, height < -1 ? -height : 1];
  if (width < 0 && height < 0) [width, height] = [input.width, input.height];
  if (width < 0) width = rescale(height, input.width, input.height * widthFactor) * widthFactor;
  if (height < 0) height = rescale(width, input.height, input.width * heightFactor) * heightFactor;
  const fit = aspectFit(options);
  if (fit !== "disable") {
    const divisor = Math.max(1, options.integer("force_divisible_by") ?? 1);
    const pick = fit === "decrease" ? Math.min : Math.max;
    const round = (side: number) => (fit === "decrease" ? Math.floor(side / divisor) : Math.ceil(side / divisor)) * divisor;
    [width, height] = [round(pick(rescale(height, input.width, input.height), width)), round(pick(rescale(width, input.height, input.width), height))];
  }
  return { width, height, exact: true };
}

function exactDimensions(options: FilterOptions, input: VideoSize): VideoSize | undefined {
  const unknown = between(0, Infinity);
  const variables = {
    ...frameVariables(options.limits, input),
    iw: exactly(input.width), in_w: exactly(input.width), ih: exactly(input.height), in_h: exactly(input.height), a: exactly(input.width / input.height),
    sar: unknown, dar: unknown,
  };
  const { width, height } = options.dimensions("w", "h", variables);
  const side = (name: string, range: Range, inputSide: number) => {
    if (!options.has(name)) return inputSide;
    if (range.lo !== range.hi || !Number.isFinite(range.lo)) return undefined;
    return Math.trunc(range.lo) === 0 ? inputSide : Math.trunc(range.lo);
  };
  const w = side("w", width, input.width);
  const h = side("h", height, input.height);
  return w === undefined || h === undefined ? undefined : { width: w, height: h };
}

/**
 * With the input unknown, a size is known only where the command's own numbers decide it: the
 * same for the smallest and the largest input.
 */
function unlessInputDecides(sizeFrom: (input: VideoSize) => FrameBound): FrameBound {
  const [small, large] = [sizeFrom({ width: 1, height: 1 }), sizeFrom({ width: MAX_SIDE, height: MAX_SIDE })];
  return small && large && small.width === large.width && small.height === large.height ? large : undefined;
}

/** Larger than any cap: stands for "any input" when testing whether a size depends on it. */
const MAX_SIDE = 1 << 20;

/** crop: never larger than its input, nor than a constant it is given. */
export const cropped: FrameRule = (options, [input]) => {
  const constant = (name: string) => {
    const range = options.range(name, frameVariables(options.limits, input));
    return range !== undefined && range.lo > 0 && Number.isFinite(range.hi) ? range.hi : Infinity;
  };
  const width = Math.min(input?.width ?? Infinity, constant("out_w"));
  const height = Math.min(input?.height ?? Infinity, constant("out_h"));
  return Number.isFinite(width) && Number.isFinite(height) ? { width, height } : undefined;
};

export const transposed: FrameRule = (_options, [input]) => (input ? { ...input, width: input.height, height: input.width } : undefined);

/** pad: its width and height, by default the input's (its `aspect` is refused: see filters.ts). */
export const padded: FrameRule = (options, [input]) => (input ? paddedSize(options, input) : unlessInputDecides((from) => paddedSize(options, from)));

function paddedSize(options: FilterOptions, input: VideoSize): VideoSize {
  const variables = frameVariables(options.limits, input);
  const side = (name: string, inputSide: number) => {
    const range = options.range(name, variables);
    return range === undefined || range.hi <= 0 ? inputSide : range.hi;
  };
  return { width: side("width", input.width), height: side("height", input.height) };
}

/**
 * tile: `layout` cells of the input frame, with `margin` around and `padding` between them
 * (vf_tile.c). The borders alone must fit the caps; with a known input, the whole grid must.
 */
export const tiled: FrameRule = (options, [input]) => {
  const layout = parseVideoSize(options.get("layout") ?? "6x5")!;
  const margin = options.range("margin")?.hi ?? 0;
  const padding = options.range("padding")?.hi ?? 0;
  const grid = (cell: VideoSize) => ({
    width: 2 * margin + layout.width * cell.width + (layout.width - 1) * padding,
    height: 2 * margin + layout.height * cell.height + (layout.height - 1) * padding,
  });
  options.checkFrame(grid({ width: 1, height: 1 }), "in its margin and padding alone");
  return input ? grid(input) : undefined;
};

/** hstack and vstack: inputs side by side, or one above the other. */
export function stacked(direction: "horizontal" | "vertical"): FrameRule {
  return (options, inputs) => {
    const count = options.range("inputs")?.hi ?? 2;
    const known = inputs.slice(0, count).filter((input): input is VideoSize => input !== undefined);
    if (known.length < count) return undefined;
    const along = (side: "width" | "height") => known.reduce((sum, input) => sum + input[side], 0);
    const across = (side: "width" | "height") => Math.max(...known.map((input) => input[side]));
    return direction === "horizontal" ? { width: along("width"), height: across("height") } : { width: across("width"), height: along("height") };
  };
}

/**
 * xstack: each input placed at `layout`'s `X_Y`, each a sum of numbers and of other inputs'
 * sizes (`w0`, `h1`), or in a `grid` of equal cells (vf_stack.c). Every input is taken at the
 * largest known input's size; the numbers alone must fit the caps whatever the inputs are.
 */
export const xstacked: FrameRule = (options, inputs) => {
  const count = options.range("inputs")?.hi ?? 2;
  const known = inputs.slice(0, count).filter((input): input is VideoSize => input !== undefined);
  const cell = known.length === count ? { width: Math.max(...known.map((input) => input.width)), height: Math.max(...known.map((input) => input.height)) } : undefined;
  const grid = options.get("grid");
  if (grid !== undefined) {
    const cells = parseVideoSize(grid)!;
    return cell ? { width: cells.width * cell.width, height: cells.height * cell.height } : undefined;
  }
  const layout = options.get("layout");
  if (layout === undefined) return stacked("horizontal")(options, inputs, false);
  const corner = (numbers: VideoSize, size: VideoSize) => xstackCorner(options, layout, count, numbers, size);
  options.checkFrame(corner({ width: 1, height: 1 }, { width: 0, height: 0 }), "in its layout's offsets alone");
  return cell ? corner(cell, cell) : undefined;
};

/** The far corner of an xstack layout, with every input of `size` and offsets' `wN`/`hN` terms worth `term`. */
function xstackCorner(options: FilterOptions, layout: string, count: number, size: VideoSize, term: VideoSize): VideoSize {
  const places = layout.split("|");
  if (places.length !== count) throw options.invalid("layout", `one position per input (${count})`);
  const offset = (text: string) =>
    text.split("+").reduce((sum, part) => {
      const match = /^(?:(\d{1,9})|([wh])(\d{1,3}))$/.exec(part);
      if (!match) throw options.invalid("layout", "positions such as 0_0|w0_0|0_h0, each a sum of numbers, wN and hN");
      return sum + (match[1] !== undefined ? Number(match[1]) : match[2] === "w" ? term.width : term.height);
    }, 0);
  let width = 0;
  let height = 0;
  for (const place of places) {
    const [x, y, ...rest] = place.split("_");
    if (x === undefined || y === undefined || rest.length > 0) throw options.invalid("layout", "positions such as 0_0|w0_0|0_h0");
    width = Math.max(width, offset(x) + size.width);
    height = Math.max(height, offset(y) + size.height);
  }
  return { width, height };
}
