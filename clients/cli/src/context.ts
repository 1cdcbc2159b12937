import { isAbsolute, resolve } from "node:path";

/**
 * The folder the user ran the CLI from. `npm run cli -- …` runs the source with the repository
 * root as the working directory and the user's folder in INIT_CWD
 * (https://docs.npmjs.com/cli/v11/commands/npm-run-script), so relative paths follow INIT_CWD
 * there. The installed bundle never reads it: run from another project's npm script, its working
 * directory is the one to trust.
 */
export function userCwd(env: NodeJS.ProcessEnv = process.env, runningFromSource = import.meta.url.endsWith(".ts")): string {
  return runningFromSource && env.INIT_CWD ? env.INIT_CWD : process.cwd();
}

export function resolveFromUser(path: string): string {
  return isAbsolute(path) ? path : resolve(userCwd(), path);
}

const SAFE_WORD = /^[A-Za-z0-9_\-+=:,./@%^]+$/;

/**
 * The command as one string. Given as one argument it is passed as written; given as several
 * argv words (the shell already split them) each is quoted back so the service's POSIX tokenizer
 * splits it the same way. The leading `ffmpeg` is optional for the service; it is added so every
 * command reads the same in logs.
 */
export function commandFromWords(words: string[]): string {
  const command = words.length === 1 ? words[0]!.trim() : words.map(quoteWord).join(" ");
  return /^ffmpeg(\s|$)/.test(command) ? command : `ffmpeg ${command}`;
}

function quoteWord(word: string): string {
  if (word !== "" && SAFE_WORD.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
