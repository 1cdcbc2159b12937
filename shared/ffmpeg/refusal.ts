import { AppError, type ErrorCode } from "../errors";

const MAX_SHOWN = 120;

/**
 * The error for a refused command. `token` is the word (or filter name) at fault, so a client
 * can point at it; `detail` says why in words. Callers write `throw refuse(...)`.
 */
export function refuse(code: ErrorCode, token: string | undefined, detail: string): AppError {
  return new AppError(code, detail, token === undefined ? {} : { token: truncate(token, 1024) });
}

/** A token as shown inside a sentence: quoted, shortened, control characters made visible. */
export function quote(token: string): string {
  return `'${truncate(token, MAX_SHOWN).replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}'`;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/** C0 controls and DEL: never meaningful in a file name, URL or option value of a command. */
export function hasControlCharacter(text: string): boolean {
  return /[\u0000-\u001f\u007f]/.test(text);
}
