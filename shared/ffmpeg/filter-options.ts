import type { GraphContext } from "./context";
import { evaluateRange, exactly, ExpressionError, type Functions, type Range, type Variables } from "./expression";
import type { PolicyLimits } from "./limits";
import { quote, refuse } from "./refusal";
import { FRAME_RATE_NAMES, parseDuration, parseInteger, parseVideoSize, type VideoSize } from "./values";

/**
 * Audio amounts given in samples are judged as if played at this rate, the lowest in common
 * use: a sample count is then at most this many times longer than the duration cap allows.
 */
export const LOWEST_SAMPLE_RATE = 8000;

/** Contact sheets rarely need more; each cell is a full input frame held in memory. */
const MAX_TILE_CELLS = 100;

/** A filter's resolved options, with the cap checks the rules use. */
export class FilterOptions {
  constructor(
    readonly filter: string,
    private readonly values: ReadonlyMap<string, string>,
    private readonly context: GraphContext,
  ) {}

  get limits(): PolicyLimits {
    return this.context.limits;
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  get(name: string): string | undefined {
    return this.values.get(name);
  }

  integer(name: string): number | undefined {
    const value = this.values.get(name);
    if (value === undefined) return undefined;
    const number = parseInteger(value);
    if (number === undefined) throw this.invalid(name, "a whole number");
    return number;
  }

  /**
   * The range of a numeric option, read as ffmpeg reads it (`1e8`, `0x7fff`, `(65535)`,
   * `2*ih`), with `variables` bounded by the caps. An expression that names anything else
   * cannot be bounded, and is refused.
   */
  range(name: string, variables: Variables = {}, functions: Functions = {}): Range | undefined {
    const value = this.values.get(name);
    if (value === undefined) return undefined;
    try {
      return evaluateRange(value, variables, functions);
    } catch (error) {
      if (error instanceof ExpressionError) throw this.invalid(name, `a number or an expression that can be bounded (${error.message})`);
      throw error;
    }
  }

  /** Refuses a value that can exceed `max`. Returns the value's range, if given. */
  cap(name: string, max: number, what: string, variables: Variables = {}): Range | undefined {
    const range = this.range(name, variables);
    if (range !== undefined && !(range.hi <= max)) throw this.limit(name, `can ask for ${describe(range.hi)} ${what}; the limit is ${max}`);
    return range;
  }

  /** A number of samples, capped as a duration at LOWEST_SAMPLE_RATE. Returns the range, if given. */
  capSamples(name: string): Range | undefined {
    const max = this.limits.maxDurationSeconds * LOWEST_SAMPLE_RATE;
    return this.cap(name, max, `samples (${this.limits.maxDurationSeconds} s at ${LOWEST_SAMPLE_RATE} Hz)`);
  }

  capSize(name: string): void {
    const value = this.values.get(name);
    if (value === undefined) return;
    const size = parseVideoSize(value);
    if (!size) throw this.invalid(name, "a size such as 1280x720");
    this.checkArea(name, size.width, size.height);
  }

  capSizeIfSize(name: string): void {
    const value = this.values.get(name);
    if (value !== undefined && parseVideoSize(value)) this.capSize(name);
  }

  /**
   * Output width and height expressions, bounded with the input's size variables (see
   * frameVariables). Each may name the other's result (`ow`, `oh`), so they are evaluated
   * twice. A value that is never positive means "from the input" (0) or "keep the aspect
   * ratio" (-1, -2): that size follows from the other and the input's shape, and is left to the
   * transcoder, which checks the real output size from ffmpeg's stream information.
   */
  capDimensions(widthName: string, heightName: string, variables: Variables = {}, functions: Functions = {}): void {
    const { width, height } = this.dimensions(widthName, heightName, variables, functions);
    const checks = [[widthName, width, this.limits.maxWidth, "width"], [heightName, height, this.limits.maxHeight, "height"]] as const;
    for (const [name, range, max, what] of checks) {
      if (this.has(name) && range.hi > 0 && !(range.hi <= max)) {
        throw this.limit(name, `can ask for a ${what} of ${describe(range.hi)} (inputs may be up to ${this.limits.maxWidth}x${this.limits.maxHeight}); the limit is ${max}, so bound it, e.g. min(${this.get(name)},${max})`);
      }
    }
    if (width.lo === width.hi && height.lo === height.hi && width.lo > 0 && height.lo > 0) this.checkArea(widthName, width.lo, height.lo);
  }

  /** The ranges of width and height expressions that may name each other's result (`ow`, `oh`); an unset one is unknown. */
  dimensions(widthName: string, heightName: string, variables: Variables = {}, functions: Functions = {}): { width: Range; height: Range } {
    const unknown: Range = { lo: 0, hi: Infinity };
    let width = unknown;
    let height = unknown;
    for (let pass = 0; pass < 2; pass++) {
      width = this.range(widthName, { ...variables, out_w: width, ow: width, out_h: height, oh: height }, functions) ?? unknown;
      height = this.range(heightName, { ...variables, out_w: width, ow: width, out_h: height, oh: height }, functions) ?? unknown;
    }
    return { width, height };
  }

  /** A rational option (`16:9`, `16/9`, `1.777`, an expression), as a range. */
  ratio(name: string): Range | undefined {
    const ratio = /^(\d{1,9}):(\d{1,9})$/.exec(this.values.get(name) ?? "");
    return ratio ? exactly(Number(ratio[1]) / Number(ratio[2])) : this.range(name);
  }

  /** Refuses a frame this filter would make past the caps; `how` says what makes it that large. */
  checkFrame(size: VideoSize, how = ""): void {
    if (this.fits(size.width, size.height)) return;
    const made = `makes frames of ${describe(size.width)}x${describe(size.height)}${how === "" ? "" : ` ${how}`}`;
    throw refuse("LIMIT_EXCEEDED", this.filter, `The filter '${this.filter}' ${made}; ${this.frameCaps()}, even for frames scaled down later.`);
  }

  /** aformat's `|`-separated sample rates, each a plain number (af_aformat.c reads them with strtol). */
  capSampleRates(name: string): void {
    for (const rate of this.values.get(name)?.split("|") ?? []) {
      if (!/^\d{1,9}$/.test(rate)) throw this.invalid(name, "sample rates such as 44100|48000");
      if (Number(rate) > this.limits.maxSampleRate) throw this.limit(name, `asks for ${rate} samples per second; the limit is ${this.limits.maxSampleRate}`);
    }
  }

  capTileLayout(name: string): void {
    const value = this.values.get(name);
    if (value === undefined) return;
    const layout = parseVideoSize(value);
    if (!layout) throw this.invalid(name, "a grid such as 3x3");
    if (layout.width * layout.height > MAX_TILE_CELLS) throw this.limit(name, `asks for a ${value} grid; the limit is ${MAX_TILE_CELLS} cells`);
  }

  /** A frame rate: a name (`ntsc`), `num:den`, or an expression (`av_parse_video_rate` evaluates one). */
  capRate(name: string): void {
    const value = this.values.get(name);
    if (value === undefined || FRAME_RATE_NAMES[value] !== undefined) return;
    const ratio = /^(\d{1,9}):(\d{1,9})$/.exec(value);
    const range = ratio ? { lo: Number(ratio[1]) / Number(ratio[2]), hi: Number(ratio[1]) / Number(ratio[2]) } : this.range(name)!;
    if (!(range.lo > 0)) throw this.invalid(name, "a positive frame rate such as 25 or 30000/1001");
    if (!(range.hi <= this.limits.maxFrameRate)) throw this.limit(name, `asks for ${value} frames per second; the limit is ${this.limits.maxFrameRate}`);
  }

  /** Returns the duration in seconds, if given. */
  capDuration(name: string): number | undefined {
    const value = this.values.get(name);
    if (value === undefined) return undefined;
    const seconds = parseDuration(value);
    if (seconds === undefined) throw this.invalid(name, "a duration such as 5 or 00:01:30");
    if (seconds > this.limits.maxDurationSeconds) throw this.limit(name, `lasts ${value}; the limit is ${this.limits.maxDurationSeconds} seconds`);
    return seconds;
  }

  /** A source without a positive duration runs until an output stops it. */
  boundedDuration(name: string): void {
    if ((this.capDuration(name) ?? -1) <= 0) this.markUnbounded();
  }

  markUnbounded(): void {
    this.context.notes.unbounded.push(this.filter);
  }

  matches(name: string, pattern: RegExp, what: string): void {
    const value = this.values.get(name);
    if (value !== undefined && !pattern.test(value)) throw this.invalid(name, what);
  }

  limit(name: string, why: string): Error {
    return refuse("LIMIT_EXCEEDED", this.filter, `The filter '${this.filter}' ${name}=${this.values.get(name) ?? ""} ${why}.`);
  }

  private checkArea(name: string, width: number, height: number): void {
    if (!this.fits(width, height)) throw this.limit(name, `asks for ${width}x${height}; ${this.frameCaps()}`);
  }

  private fits(width: number, height: number): boolean {
    const { maxWidth, maxHeight, maxPixels } = this.limits;
    return width <= maxWidth && height <= maxHeight && width * height <= maxPixels;
  }

  private frameCaps(): string {
    return `the limit is ${this.limits.maxWidth}x${this.limits.maxHeight} and ${this.limits.maxPixels} pixels`;
  }

  invalid(name: string, what: string): Error {
    return refuse("FILTER_NOT_ALLOWED", this.filter, `The filter '${this.filter}' needs ${what} for '${name}', not ${quote(this.values.get(name) ?? "")}.`);
  }
}

function describe(value: number): string {
  return Number.isFinite(value) ? String(Math.round(value * 1000) / 1000) : "an unbounded amount of";
}
