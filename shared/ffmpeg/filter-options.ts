import type { GraphContext } from "./context";
import type { PolicyLimits } from "./limits";
import { quote, refuse } from "./refusal";
import { parseDecimal, parseDuration, parseFrameRate, parseInteger, parseVideoSize } from "./values";

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

  /** A literal number over `max` is refused; expressions are left to ffmpeg. */
  cap(name: string, max: number, what: string): void {
    const value = this.values.get(name);
    const number = value === undefined ? undefined : parseDecimal(value);
    if (number !== undefined && number > max) throw this.limit(name, `asks for ${value} ${what}; the limit is ${max}`);
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

  /** Literal widths and heights are capped; expressions (`iw/2`, `-2`) depend on the input, which the transcoder's probe caps. */
  capDimensions(widthName: string, heightName: string): void {
    const width = parseDecimal(this.values.get(widthName) ?? "");
    const height = parseDecimal(this.values.get(heightName) ?? "");
    if (width !== undefined && width > this.limits.maxWidth) throw this.limit(widthName, `asks for a width of ${width}; the limit is ${this.limits.maxWidth}`);
    if (height !== undefined && height > this.limits.maxHeight) throw this.limit(heightName, `asks for a height of ${height}; the limit is ${this.limits.maxHeight}`);
    if (width !== undefined && height !== undefined && width > 0 && height > 0) this.checkArea(widthName, width, height);
  }

  capTileLayout(name: string): void {
    const value = this.values.get(name);
    if (value === undefined) return;
    const layout = parseVideoSize(value);
    if (!layout) throw this.invalid(name, "a grid such as 3x3");
    if (layout.width * layout.height > MAX_TILE_CELLS) throw this.limit(name, `asks for a ${value} grid; the limit is ${MAX_TILE_CELLS} cells`);
  }

  capRate(name: string): void {
    const value = this.values.get(name);
    if (value === undefined) return;
    const rate = parseFrameRate(value);
    if (rate === undefined) throw this.invalid(name, "a frame rate such as 25 or 30000/1001");
    if (rate > this.limits.maxFrameRate) throw this.limit(name, `asks for ${value} frames per second; the limit is ${this.limits.maxFrameRate}`);
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
    const { maxWidth, maxHeight, maxPixels } = this.limits;
    if (width > maxWidth || height > maxHeight || width * height > maxPixels) {
      throw this.limit(name, `asks for ${width}x${height}; the limit is ${maxWidth}x${maxHeight} and ${maxPixels} pixels`);
    }
  }

  private invalid(name: string, what: string): Error {
    return refuse("FILTER_NOT_ALLOWED", this.filter, `The filter '${this.filter}' needs ${what} for '${name}', not ${quote(this.values.get(name) ?? "")}.`);
  }
}
