/**
 * ffmpeg's numbers and expressions (libavutil/eval.c, `av_strtod` and `av_expr_parse`), read
 * so caps apply to the value ffmpeg will use: `1e4`, `0x7fff`, `48k`, `1Mi`, `(65535)`,
 * `2*ih`, `min(iw,1920)`. Evaluation is over ranges: each variable stands for every value it
 * may take (`iw` is any width up to the input cap), and the result bounds every value the
 * expression can have. Anything this module does not know — a function, a name, syntax — is
 * an error, so an expression is either bounded soundly or refused, never guessed.
 */

export interface Range {
  lo: number;
  hi: number;
}

export type Variables = Readonly<Record<string, Range>>;

export class ExpressionError extends Error {}

export const exactly = (value: number): Range => ({ lo: value, hi: value });
export const between = (lo: number, hi: number): Range => ({ lo, hi });
const UNBOUNDED: Range = { lo: -Infinity, hi: Infinity };
const BOOLEAN: Range = { lo: 0, hi: 1 };

/** eval.c `constants`. */
const CONSTANTS: Variables = {
  E: exactly(Math.E),
  PI: exactly(Math.PI),
  PHI: exactly((1 + Math.sqrt(5)) / 2),
  QP2LAMBDA: exactly(118),
};

/** eval.c `si_prefixes`: the letter after a number scales it by 10^n (or 2^(10n/3) when followed by `i`). */
const SI_PREFIXES: Readonly<Record<string, number>> = {
  y: -24, z: -21, a: -18, f: -15, p: -12, n: -9, u: -6, m: -3, c: -2, d: -1, h: 2,
  k: 3, K: 3, M: 6, G: 9, T: 12, P: 15, E: 18, Z: 21, Y: 24,
};

const NUMBER = /^(?:(0[xX][0-9a-fA-F]+)|([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf(?:inity)?|nan)))(dB|[yzafpnumcdhkKMGTPEZY]i?)?(B?)/i;

/**
 * `av_strtod` at the start of `text`: a decimal (with exponent), `0x` hex, `inf` or `nan`,
 * then an optional SI prefix (`k`, `M`, `Ki`...) or `dB`, then an optional `B` (×8).
 * Returns the value and how many characters it used, or undefined when no number starts there.
 */
export function readNumber(text: string): { value: number; length: number } | undefined {
  const match = NUMBER.exec(text);
  if (!match) return undefined;
  const [whole, hex, decimal, suffix = "", bytes] = match;
  let value = hex !== undefined ? parseInt(hex.slice(2), 16) : parseDecimalText(decimal!);
  if (suffix.toLowerCase() === "db") {
    if (suffix !== "dB") return undefined;
    value = 10 ** (value / 20);
  } else if (suffix !== "") {
    const power = SI_PREFIXES[suffix[0]!];
    if (power === undefined) return undefined;
    value *= suffix.endsWith("i") ? 2 ** (power / 0.3) : 10 ** power;
  }
  if (bytes) value *= 8;
  return { value, length: whole.length };
}

function parseDecimalText(text: string): number {
  const lower = text.toLowerCase().replace(/^\+/, "");
  if (lower.endsWith("nan")) return NaN;
  if (lower.endsWith("inf") || lower.endsWith("infinity")) return lower.startsWith("-") ? -Infinity : Infinity;
  return Number(text);
}

/** A whole string read by `av_strtod` (ffmpeg's command-line numbers: `-ar 48k`, `-frames 1e4`). */
export function parseNumber(text: string): number | undefined {
  const number = readNumber(text);
  return number && number.length === text.length ? number.value : undefined;
}

/**
 * The range of values an ffmpeg expression can take. Throws ExpressionError for syntax ffmpeg
 * would not read the same way, and for names and functions outside `variables` and the
 * supported set.
 *
 * @example
 * evaluateRange("2*ih", { ih: between(1, 8192) }); // { lo: 2, hi: 16384 }
 */
export function evaluateRange(text: string, variables: Variables = {}, functions: Functions = {}): Range {
  // av_expr_parse drops every whitespace character before parsing.
  const parser = new Parser(text.replace(/\s+/g, ""), { ...CONSTANTS, ...variables }, { ...FUNCTIONS, ...functions });
  const range = parser.expression();
  if (!parser.done()) throw new ExpressionError(`unexpected '${parser.rest().slice(0, 20)}'`);
  return Number.isNaN(range.lo) || Number.isNaN(range.hi) ? UNBOUNDED : range;
}

/** The value of an expression without variables, or undefined if it is not one. */
export function evaluateConstant(text: string): number | undefined {
  try {
    const range = evaluateRange(text);
    return range.lo === range.hi ? range.lo : undefined;
  } catch (error) {
    if (error instanceof ExpressionError) return undefined;
    throw error;
  }
}

/**
 * eval.c functions whose cost has no bound: `while(c, body)` runs until `c` is 0, and
 * `taylor` and `root` evaluate their argument up to ~1000 times, so nesting them multiplies
 * (three deep is 10^9 evaluations per frame).
 */
const LOOPING_FUNCTIONS = ["while", "taylor", "root"] as const;

const IDENTIFIER_CHAR = /[A-Za-z0-9_]/;
/** What some level of ffmpeg's reading drops: av_expr_parse drops whitespace, av_get_token `\` and `'`. */
const DROPPED_CHAR = /[\\'\s]/;

/**
 * The first looping function (`while`, `taylor`, `root`) that ffmpeg could call anywhere it
 * reads `text`, or any part of it, as an expression — a filter option, `enable=`, a
 * drawtext `%{eif:…}`, `-force_key_frames expr:`. eval.c takes a name followed, after any
 * other characters, by a `(` as a call (`while-(1,1)` calls `while`), and each level of
 * escaping may drop `\`, `'` and blanks, so the search drops them all and takes every name
 * that starts after a non-identifier character: it can only over-match, never miss.
 */
export function findLoopingFunction(text: string): string | undefined {
  const { kept, starts, ends } = withoutDroppedCharacters(text);
  for (let index = 0; index < kept.length; index++) {
    if (!starts[index]) continue;
    for (const name of LOOPING_FUNCTIONS) {
      const end = index + name.length;
      if (!kept.startsWith(name, index)) continue;
      const terminated = end === kept.length || ends[end - 1] === true || !IDENTIFIER_CHAR.test(kept[end]!);
      if (terminated && kept.includes("(", end)) return name;
    }
  }
  return undefined;
}

/** `text` without the characters some reading drops, marking where a name may start or end. */
function withoutDroppedCharacters(text: string): { kept: string; starts: boolean[]; ends: boolean[] } {
  let kept = "";
  const starts: boolean[] = [];
  const ends: boolean[] = [];
  let boundary = true;
  for (const char of text) {
    if (DROPPED_CHAR.test(char)) {
      boundary = true;
      if (kept.length > 0) ends[kept.length - 1] = true;
      continue;
    }
    starts[kept.length] = boundary;
    kept += char;
    boundary = !IDENTIFIER_CHAR.test(char);
  }
  return { kept, starts, ends };
}

type RangeFunction = (args: Range[]) => Range;

/** Functions a particular option adds to the common set (rotate's `rotw`/`roth`). */
export type Functions = Readonly<Record<string, { arity: readonly number[]; apply: RangeFunction; exact?: (...args: number[]) => number }>>;

const monotone = (f: (x: number) => number): RangeFunction => ([x]) => sorted(f(x!.lo), f(x!.hi));

/** The functions of eval.c that can be bounded; `st`/`ld`/`while`/`random`... are not, and are refused. */
const FUNCTIONS: Functions = {
  min: { arity: [2], apply: ([a, b]) => ({ lo: Math.min(a!.lo, b!.lo), hi: Math.min(a!.hi, b!.hi) }) },
  max: { arity: [2], apply: ([a, b]) => ({ lo: Math.max(a!.lo, b!.lo), hi: Math.max(a!.hi, b!.hi) }) },
  trunc: { arity: [1], apply: monotone(Math.trunc) },
  floor: { arity: [1], apply: monotone(Math.floor) },
  ceil: { arity: [1], apply: monotone(Math.ceil) },
  // C's round() takes halves away from zero; Math.round takes them up.
  round: { arity: [1], apply: monotone((x) => Math.sign(x) * Math.round(Math.abs(x))) },
  sqrt: { arity: [1], apply: ([x]) => (x!.lo < 0 ? UNBOUNDED : sorted(Math.sqrt(x!.lo), Math.sqrt(x!.hi))) },
  exp: { arity: [1], apply: monotone(Math.exp) },
  log: { arity: [1], apply: ([x]) => (x!.lo < 0 ? UNBOUNDED : sorted(Math.log(x!.lo), Math.log(x!.hi))) },
  abs: { arity: [1], apply: ([x]) => (x!.lo >= 0 ? x! : x!.hi <= 0 ? negate(x!) : { lo: 0, hi: Math.max(-x!.lo, x!.hi) }) },
  sin: { arity: [1], apply: () => between(-1, 1), exact: Math.sin },
  cos: { arity: [1], apply: () => between(-1, 1), exact: Math.cos },
  hypot: { arity: [2], apply: ([a, b]) => ({ lo: 0, hi: Math.hypot(magnitude(a!), magnitude(b!)) }), exact: Math.hypot },
  mod: { arity: [2], apply: ([_a, b]) => between(-magnitude(b!), magnitude(b!)), exact: (a, b) => a - Math.floor(a / b) * b },
  clip: { arity: [3], apply: ([x, low, high]) => FUNCTIONS.max!.apply([FUNCTIONS.min!.apply([x!, high!]), low!]) },
  if: { arity: [2, 3], apply: ([condition, then, otherwise = exactly(0)]) => choose(condition!, then!, otherwise) },
  ifnot: { arity: [2, 3], apply: ([condition, then, otherwise = exactly(0)]) => choose(condition!, otherwise, then!) },
  not: { arity: [1], apply: ([x]) => truth(x!.lo === 0 && x!.hi === 0, x!.lo > 0 || x!.hi < 0) },
  eq: { arity: [2], apply: ([a, b]) => truth(a!.lo === a!.hi && b!.lo === b!.hi && a!.lo === b!.lo, a!.hi < b!.lo || a!.lo > b!.hi) },
  gt: { arity: [2], apply: ([a, b]) => truth(a!.lo > b!.hi, a!.hi <= b!.lo) },
  gte: { arity: [2], apply: ([a, b]) => truth(a!.lo >= b!.hi, a!.hi < b!.lo) },
  lt: { arity: [2], apply: ([a, b]) => truth(a!.hi < b!.lo, a!.lo >= b!.hi) },
  lte: { arity: [2], apply: ([a, b]) => truth(a!.hi <= b!.lo, a!.lo > b!.hi) },
  isnan: { arity: [1], apply: () => BOOLEAN, exact: (x) => Number(Number.isNaN(x)) },
  isinf: { arity: [1], apply: () => BOOLEAN, exact: (x) => Number(x === Infinity || x === -Infinity) },
  between: { arity: [3], apply: () => BOOLEAN, exact: (x, lo, hi) => Number(x >= lo && x <= hi) },
};

/** A comparison over ranges: 1 or 0 when the ranges decide it, either otherwise. */
function truth(always: boolean, never: boolean): Range {
  return always ? exactly(1) : never ? exactly(0) : BOOLEAN;
}

/** `if(c, a, b)`: a constant condition picks a branch (in C, NaN is true); otherwise either may be taken. */
function choose(condition: Range, whenTrue: Range, whenFalse: Range): Range {
  if (condition.lo === condition.hi) return condition.lo !== 0 ? whenTrue : whenFalse;
  if (Number.isNaN(condition.lo) || Number.isNaN(condition.hi)) return { lo: Math.min(whenTrue.lo, whenFalse.lo), hi: Math.max(whenTrue.hi, whenFalse.hi) };
  return { lo: Math.min(whenTrue.lo, whenFalse.lo), hi: Math.max(whenTrue.hi, whenFalse.hi) };
}

function sorted(a: number, b: number): Range {
  return a <= b ? { lo: a, hi: b } : { lo: b, hi: a };
}

function negate(x: Range): Range {
  return { lo: -x.hi, hi: -x.lo };
}

function magnitude(x: Range): number {
  return Math.max(Math.abs(x.lo), Math.abs(x.hi));
}

/** Interval product; 0 × ∞ counts as 0, so `0*sar` stays 0 whatever `sar` is. */
function multiply(a: Range, b: Range): Range {
  const times = (x: number, y: number) => (x === 0 || y === 0 ? 0 : x * y);
  const corners = [times(a.lo, b.lo), times(a.lo, b.hi), times(a.hi, b.lo), times(a.hi, b.hi)];
  return { lo: Math.min(...corners), hi: Math.max(...corners) };
}

function divide(a: Range, b: Range): Range {
  if (b.lo <= 0 && b.hi >= 0) return UNBOUNDED;
  return multiply(a, sorted(1 / b.lo, 1 / b.hi));
}

function power(base: Range, exponent: Range): Range {
  if (base.lo === base.hi && exponent.lo === exponent.hi) return exactly(base.lo ** exponent.lo);
  // For a non-negative base, x^y is monotone in each argument, so the corners bound it.
  if (base.lo < 0) return UNBOUNDED;
  const corners = [base.lo ** exponent.lo, base.lo ** exponent.hi, base.hi ** exponent.lo, base.hi ** exponent.hi];
  return corners.some(Number.isNaN) ? UNBOUNDED : { lo: Math.min(...corners), hi: Math.max(...corners) };
}

/** Recursive descent in eval.c's order: `;` < `+ -` < `* /` < `^` < unary sign < primary. */
class Parser {
  private position = 0;
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly names: Variables,
    private readonly functions: Functions,
  ) {}

  done(): boolean {
    return this.position === this.text.length;
  }

  rest(): string {
    return this.text.slice(this.position);
  }

  expression(): Range {
    if (++this.depth > 100) throw new ExpressionError("the expression is nested too deeply");
    let value = this.sum();
    // `a;b` evaluates both and is worth b.
    while (this.accept(";")) value = this.sum();
    this.depth--;
    return value;
  }

  private sum(): Range {
    let value = this.term();
    while (this.peek() === "+" || this.peek() === "-") {
      // As in eval.c, the sign is read by the next term, so `a-b` is `a + (-b)`.
      const next = this.term();
      value = { lo: value.lo + next.lo, hi: value.hi + next.hi };
    }
    return value;
  }

  private term(): Range {
    let value = this.factor();
    for (;;) {
      if (this.accept("*")) value = multiply(value, this.factor());
      else if (this.accept("/")) value = divide(value, this.factor());
      else return value;
    }
  }

  private factor(): Range {
    let value = this.signed();
    while (this.accept("^")) value = power(value, this.signed());
    return value;
  }

  private signed(): Range {
    if (this.accept("-")) return negate(this.primary());
    this.accept("+");
    return this.primary();
  }

  private primary(): Range {
    const number = readNumber(this.rest());
    if (number) {
      this.position += number.length;
      return exactly(number.value);
    }
    if (this.accept("(")) {
      const value = this.expression();
      if (!this.accept(")")) throw new ExpressionError("a '(' is not closed");
      return value;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.rest())?.[0];
    if (name === undefined) throw new ExpressionError(this.done() ? "the expression ends too early" : `unexpected '${this.rest().slice(0, 20)}'`);
    this.position += name.length;
    if (this.accept("(")) return this.call(name);
    const value = Object.hasOwn(this.names, name) ? this.names[name] : undefined;
    if (value === undefined) throw new ExpressionError(`'${name}' is not a name this option knows`);
    return value;
  }

  private call(name: string): Range {
    const args = [this.expression()];
    while (this.accept(",")) args.push(this.expression());
    if (!this.accept(")")) throw new ExpressionError(`the call of '${name}' is not closed`);
    const fn = Object.hasOwn(this.functions, name) ? this.functions[name] : undefined;
    if (fn === undefined) throw new ExpressionError(`the function '${name}' cannot be bounded`);
    if (!fn.arity.includes(args.length)) throw new ExpressionError(`'${name}' takes ${fn.arity.join(" or ")} arguments`);
    // Functions whose range is looser than their value are computed exactly on constants.
    if (fn.exact && args.every((arg) => arg.lo === arg.hi)) return exactly(fn.exact(...args.map((arg) => arg.lo)));
    return fn.apply(args);
  }

  private peek(): string | undefined {
    return this.text[this.position];
  }

  private accept(char: string): boolean {
    if (this.text[this.position] !== char) return false;
    this.position++;
    return true;
  }
}
