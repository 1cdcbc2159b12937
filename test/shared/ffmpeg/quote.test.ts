import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { quoteArgv } from "../../../shared/ffmpeg/quote";
import { tokenize } from "../../../shared/ffmpeg/tokenize";

/** Any word a command can carry: every character but NUL and CR, shell syntax, quotes and non-ASCII spaces included. */
const character = (unit: "binary" | "binary-ascii") => fc.string({ unit, minLength: 1, maxLength: 1 });
const word = fc.string({ unit: fc.oneof(fc.constantFrom(..."'\"\\ $`;|&<>()#*?!{}[]~\n\t\u00a0\u2028=:,-"), character("binary-ascii"), character("binary")), maxLength: 40 })
  .filter((text) => !text.includes("\0") && !text.includes("\r"));

describe("quoteArgv", () => {
  it("gives a command line that tokenizes back into exactly the words it was given, whatever they hold", () => {
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 12 }), (argv) => {
        expect(tokenize(quoteArgv(argv))).toEqual(argv);
      }),
      { numRuns: 2000 },
    );
  });

  it.each([
    [["-i", "https://example.com/a.mp4", "out.mp4"], "ffmpeg -i https://example.com/a.mp4 out.mp4"],
    [["-metadata", "title=it's"], `ffmpeg -metadata 'title=it'\\''s'`],
    [["-i", "x -i file:///etc/passwd"], "ffmpeg -i 'x -i file:///etc/passwd'"],
    [["-vf", "$(id)"], "ffmpeg -vf '$(id)'"],
    [["-metadata", ""], "ffmpeg -metadata ''"],
  ])("quotes %j as %s", (argv, command) => {
    expect(quoteArgv(argv)).toBe(command);
    expect(tokenize(command)).toEqual(argv);
  });

  it("keeps a first word that reads as a program name a word, after the ffmpeg it puts first", () => {
    expect(tokenize(quoteArgv(["sh", "-c", "id"]))).toEqual(["sh", "-c", "id"]);
    expect(tokenize(quoteArgv(["ffmpeg", "x.mp4"]))).toEqual(["ffmpeg", "x.mp4"]);
  });

  it("refuses words no command can carry: NUL, and CR (tokenize reads CR LF as LF)", () => {
    expect(() => quoteArgv(["a\0b"])).toThrow(RangeError);
    expect(() => quoteArgv(["a\r\nb"])).toThrow(RangeError);
  });
});
