/**
 * ffmpeg's number and expression syntax (libavutil/eval.c), evaluated over ranges so caps
 * apply to what ffmpeg will use. The last block checks the reading against the pinned ffmpeg.
 */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { between, evaluateConstant, evaluateRange, exactly, ExpressionError, findLoopingFunction, parseNumber } from "../../../shared/ffmpeg/expression";

const FRAME = { iw: between(1, 8192), ih: between(1, 8192), sar: between(1, 1) };

describe("numbers as av_strtod reads them", () => {
  it.each([
    ["1e4", 1e4], ["1E4", 1e4], ["2.5", 2.5], [".5", 0.5], ["5.", 5], ["010", 10], ["0x7fff", 0x7fff], ["0X10", 16],
    ["48k", 48_000], ["48K", 48_000], ["1.5M", 1.5e6], ["2G", 2e9], ["1T", 1e12], ["2E", 2e18], ["1Ki", 1024], ["1Mi", 1024 ** 2],
    ["1KiB", 8192], ["1B", 8], ["500m", 0.5], ["5d", 0.5], ["2h", 200], ["20dB", 10], ["0x10k", 16_000],
  ])("reads %s as %d", (text, value) => {
    expect(parseNumber(text)).toBeCloseTo(value, 6);
  });

  it("reads inf and nan, so a cap sees them", () => {
    expect(parseNumber("inf")).toBe(Infinity);
    expect(parseNumber("INFINITY")).toBe(Infinity);
    expect(parseNumber("nan")).toBeNaN();
  });

  it.each(["", "e4", "1e", "1g", "1x", "0x", "1db", "--1", "1 2"])("does not read %j as one number", (text) => {
    expect(parseNumber(text)).toBeUndefined();
  });
});

describe("expressions", () => {
  it.each([
    ["(65535)", 65535], ["2*3+4", 10], ["2+3*4", 14], ["(2+3)*4", 20], ["2^10", 1024], ["2^3^2", 64], ["-2^2", 4], ["2^-1", 0.5],
    ["10/4", 2.5], ["7-2-1", 4], ["2--3", 5], ["1 + 2", 3], ["min(3,9)", 3], ["max(3,9)", 9], ["trunc(2.7)", 2], ["round(2.5)", 3],
    ["ceil(2.1)", 3], ["floor(-2.1)", -3], ["if(1,5,7)", 5], ["if(0,5,7)", 7], ["if(0,5)", 0], ["ifnot(0,5,7)", 5], ["abs(-4)", 4],
    ["clip(50,0,10)", 10], ["sqrt(16)", 4], ["PI", Math.PI], ["1;2", 2], ["48k*2", 96_000], ["1e3*1e3", 1e6], ["0x10*2", 32],
  ])("evaluates %s to %d", (text, value) => {
    expect(evaluateConstant(text)).toBeCloseTo(value, 6);
  });

  it.each([
    ["iw*100", 819_200], ["2*ih", 16_384], ["min(iw,1920)", 1920], ["trunc(iw/2)*2", 8192], ["if(gt(iw,ih),iw,ih)", 8192],
    ["max(iw,ih)^2", 8192 ** 2], ["iw*sar", 8192], ["iw+0*t", 8192],
  ])("bounds %s by the input caps: at most %d", (text, max) => {
    expect(evaluateRange(text, { ...FRAME, t: between(0, Infinity) }).hi).toBe(max);
  });

  it("decides comparisons the ranges decide, and takes both branches otherwise", () => {
    expect(evaluateRange("if(gt(iw,0),1920,99999)", FRAME)).toEqual({ lo: 1920, hi: 1920 });
    expect(evaluateRange("if(gt(iw,ih),1920,1080)", FRAME)).toEqual({ lo: 1080, hi: 1920 });
    expect(evaluateRange("if(lt(iw,10000),iw,iw*100)", FRAME).hi).toBe(8192);
  });

  it("keeps 0 × unbounded at 0, so a zero factor cannot hide a variable", () => {
    expect(evaluateRange("iw*10+0*t", { ...FRAME, t: between(0, Infinity) })).toEqual({ lo: 10, hi: 81_920 });
  });

  it("is unbounded when a divisor may be 0", () => {
    expect(evaluateRange("1/(iw-1)", FRAME).hi).toBe(Infinity);
  });

  it.each(["foo", "iw2", "ld(0)", "st(0,1)", "random(0)", "while(1,1)", "1+", "(1", "1)", "min(1)", "(1)(2)", "iw iw", "1,2"])(
    "refuses %j: unknown names, unbounded functions and broken syntax",
    (text) => {
      expect(() => evaluateRange(text, FRAME)).toThrow(ExpressionError);
    },
  );

  it("refuses nesting deep enough to exhaust the stack", () => {
    expect(() => evaluateRange(`${"(".repeat(500)}1${")".repeat(500)}`)).toThrow(ExpressionError);
  });
});

describe("functions that can loop, wherever ffmpeg may read an expression", () => {
  it.each([
    ["while(1,1)", "while"], ["1+while(1,1)", "while"], ["while (1,1)", "while"], ["wh ile(1,1)", "while"], ["wh\\ile(1,1)", "while"],
    ["wh'il'e(1,1)", "while"], ["while-(1,1)", "while"], ["while$x(1,1)", "while"], ["x:while(1,1)", "while"], ["%{eif:while(1,1):d}", "while"],
    ["taylor(1,1)", "taylor"], ["root(t,1)", "root"], ["st(0,1);while(ld(0),st(0,0))", "while"], ["iw while(1,1)", "while"],
  ])("finds the call in %j", (text, name) => {
    expect(findLoopingFunction(text)).toBe(name);
  });

  it.each(["PTS*2", "if(gt(t,1),1,0)", "awhile(1,1)", "while_x(1)", "whiles(1,1)", "While(1,1)", "meanwhile", "while", "root", "st(0,1);ld(0)", "rooted(1)", "uproot(1)"])(
    "finds no call in %j",
    (text) => {
      expect(findLoopingFunction(text)).toBeUndefined();
    },
  );
});

describe("soundness of the ranges (property)", () => {
  const leaf = fc.oneof(fc.constantFrom("iw", "ih", "a", "-2", "0", "0.5", "1e1", "0x10", "48k", "(3)"), fc.integer({ min: -50, max: 50 }).map(String));
  const expression: fc.Arbitrary<string> = fc.letrec<{ node: string }>((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc.tuple(tie("node"), fc.constantFrom("+", "-", "*", "/", "^"), tie("node")).map(([a, op, b]) => (op === "^" ? `(${a})^2` : `(${a})${op}(${b})`)),
      fc.tuple(fc.constantFrom("min", "max", "hypot", "mod", "gt", "lt", "eq", "gte", "lte"), tie("node"), tie("node")).map(([f, a, b]) => `${f}(${a},${b})`),
      fc.tuple(fc.constantFrom("trunc", "floor", "ceil", "round", "abs", "not", "sqrt"), tie("node")).map(([f, a]) => `${f}(${a})`),
      fc.tuple(tie("node"), tie("node"), tie("node")).map(([c, a, b]) => `if(${c},${a},${b})`),
      fc.tuple(tie("node"), tie("node"), tie("node")).map(([x, lo, hi]) => `clip(${x},${lo},${hi})`),
    ),
  })).node;

  it("every value an expression takes for a concrete input lies within the range computed for all inputs", () => {
    fc.assert(
      fc.property(expression, fc.integer({ min: 1, max: 8192 }), fc.integer({ min: 1, max: 8192 }), (text, width, height) => {
        const bounds = evaluateRange(text, { iw: between(1, 8192), ih: between(1, 8192), a: between(1 / 8192, 8192) });
        const value = evaluateRange(text, { iw: exactly(width), ih: exactly(height), a: exactly(width / height) });
        if (value.lo !== value.hi || !Number.isFinite(value.lo)) return;
        expect(value.lo).toBeGreaterThanOrEqual(bounds.lo - 1e-9 * Math.abs(bounds.lo));
        expect(value.lo).toBeLessThanOrEqual(bounds.hi + 1e-9 * Math.abs(bounds.hi));
      }),
      { numRuns: 2000 },
    );
  });
});

describe.skipIf(!existsSync("/usr/bin/ffmpeg"))("the same reading as the pinned ffmpeg", () => {
  /** The width ffmpeg's scale filter gives a 16x16 frame for a width expression. */
  function scaledWidth(expression: string): number {
    const result = spawnSync("/usr/bin/ffmpeg", ["-hide_banner", "-f", "lavfi", "-i", "nullsrc=s=16x16:d=0.04", "-vf", `scale=w='${expression}':h=16`, "-f", "null", "-"], { encoding: "utf8" });
    const match = /Stream #0:0: Video: wrapped_avframe, \w+(?:\([^)]*\))?, (\d+)x16/.exec(result.stderr);
    if (!match) throw new Error(result.stderr.slice(-500));
    return Number(match[1]);
  }

  it.each(["0.032k", "0x20", "(32)", "2^5", "iw*2", "min(iw*4,40)", "trunc(iw*1.9/2)*2", "if(gt(iw,ih),64,48)", "4d*16", "1e1*3", "0.5Ki*0.0625", "iw+0*PI"])(
    "scale=w=%s",
    (expression) => {
      const range = evaluateRange(expression, { iw: between(16, 16), ih: between(16, 16) });
      expect(range.lo).toBe(range.hi);
      expect(scaledWidth(expression)).toBe(Math.trunc(range.hi));
    },
  );
});
