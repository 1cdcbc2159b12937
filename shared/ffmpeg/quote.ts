/** Words that need no quoting: the characters no shell, shlex or shell-quote treats specially. */
const BARE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/**
 * The command line whose `tokenize` is exactly `argv`: `ffmpeg` and each word, single-quoted
 * unless it is made only of plain characters (a `'` inside becomes `'\''`). The inverse of
 * `tokenize` for any word without NUL or carriage return, which no command can carry (tokenize
 * refuses NUL and reads CR LF as LF); those throw. Presets build their commands with it, so a
 * value put into one word stays one word.
 *
 * @example
 * quoteArgv(["-i", "https://example.com/a b.mp4", "out.mp4"]); // "ffmpeg -i 'https://example.com/a b.mp4' out.mp4"
 */
export function quoteArgv(argv: readonly string[]): string {
  return ["ffmpeg", ...argv.map(quoteWord)].join(" ");
}

function quoteWord(word: string): string {
  if (word.includes("\0") || word.includes("\r")) throw new RangeError("A command word cannot carry NUL or a carriage return.");
  if (BARE_WORD.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
