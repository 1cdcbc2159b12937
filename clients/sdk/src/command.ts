import { FFedgeError } from "./errors.js";
import { isLocalFile, node } from "./local.js";

/** One word of the command: its value after POSIX quoting, and where it stands in the text. */
export interface Word {
  value: string;
  start: number;
  end: number;
}

export interface LocalInput {
  /** The `-i` word as written. */
  word: Word;
  /** The path resolved against `cwd`. */
  path: string;
}

/** A word with a scheme (`https:`, `data:`...) is a URL; a Windows drive letter is not a scheme. */
const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]+:/;
const EXPLICIT_PATH = /^(\.{1,2}[\\/]|[\\/]|[A-Za-z]:[\\/])/;

/**
 * The command's words as a POSIX shell quotes them (as the service's tokenizer does), with
 * their places in the text, or undefined for unbalanced quotes: the service then refuses the
 * command with its own code. Shell operators are left inside words: the text around the
 * rewritten inputs is sent unchanged, so the service still sees and refuses them.
 */
export function words(text: string): Word[] | undefined {
  const found: Word[] = [];
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    const start = i;
    let value = "";
    while (i < text.length && !/\s/.test(text[i]!)) {
      const c = text[i]!;
      if (c === "'") {
        const close = text.indexOf("'", i + 1);
        if (close === -1) return undefined;
        value += text.slice(i + 1, close);
        i = close + 1;
      } else if (c === '"') {
        for (i++; i < text.length && text[i] !== '"'; i++) {
          if (text[i] === "\\" && '"\\$`\n'.includes(text[i + 1] ?? "")) i++;
          value += text[i];
        }
        if (i >= text.length) return undefined;
        i++;
      } else if (c === "\\") {
        if (i + 1 >= text.length) return undefined;
        value += text[i + 1];
        i += 2;
      } else {
        value += c;
        i++;
      }
    }
    found.push({ value, start, end: i });
  }
  return found;
}

/**
 * The local files among the command's inputs. Only `-i` reads an input: every other option
 * that would read a file is refused by the service (shared/ffmpeg/options.ts). A word written
 * as a path (`./in.mp4`, `/data/in.mp4`) must exist; a bare word (`in.mp4`) counts only if it
 * does, so anything else is left for the service to judge.
 */
export async function localInputs(argv: readonly Word[], cwd?: string): Promise<LocalInput[]> {
  const found: LocalInput[] = [];
  for (let i = 0; i < argv.length - 1; i++) {
    if (argv[i]!.value !== "-i") continue;
    const word = argv[++i]!;
    if (URL_SCHEME.test(word.value) && !/^[A-Za-z]:[\\/]/.test(word.value)) continue;
    const fs = await node();
    const path = fs.resolve(cwd ?? ".", word.value);
    if (await isLocalFile(path)) found.push({ word, path });
    else if (EXPLICIT_PATH.test(word.value)) throw FFedgeError.local("FILE_NOT_FOUND", "File not found", `The input ${JSON.stringify(word.value)} is not a file${cwd ? ` in ${cwd}` : ""}.`);
  }
  return found;
}

/** The command text with each uploaded input's word replaced by its URL, single-quoted; everything else as written. */
export function rewrite(text: string, replacements: ReadonlyArray<{ word: Word; url: string }>): string {
  let out = text;
  for (const { word, url } of [...replacements].sort((a, b) => b.word.start - a.word.start)) {
    out = `${out.slice(0, word.start)}'${url.replaceAll("'", "'\\''")}'${out.slice(word.end)}`;
  }
  return out;
}
