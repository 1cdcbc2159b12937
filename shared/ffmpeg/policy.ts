import { AppError } from "../errors";
import type { ParsedCommand } from "./types";

/** Plain file names: no path, no leading dot, a media extension. `%03d` patterns are allowed for sequences. */
const OUTPUT_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.%-]{0,127}\.[A-Za-z0-9]{1,8}$/;

/**
 * The rules every command must pass before anything is fetched or run. Applied at the edge
 * on submission and again by the transcoder before it spawns ffmpeg.
 */
export function enforcePolicy(parsed: ParsedCommand): ParsedCommand {
  for (const input of parsed.inputs) {
    if (!/^https?:\/\//i.test(input.url)) {
      throw new AppError("INPUT_NOT_ALLOWED", `Input '${input.url}' is not allowed: inputs must be http(s) URLs.`, { token: input.url });
    }
  }
  const seen = new Set<string>();
  for (const output of parsed.outputs) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(output.filename) || output.filename.includes("/") || output.filename.includes("\\")) {
      throw new AppError("OUTPUT_NOT_ALLOWED", `Output '${output.filename}' must be a plain file name, not a path or URL.`, { token: output.filename });
    }
    if (!OUTPUT_NAME.test(output.filename) || output.filename.includes("..")) {
      throw new AppError("OUTPUT_NOT_ALLOWED", `Output '${output.filename}' is not an allowed file name: use letters, digits, '_', '-', '.' and an extension.`, { token: output.filename });
    }
    if (seen.has(output.filename)) throw new AppError("OUTPUT_NOT_ALLOWED", `Output '${output.filename}' is named twice.`, { token: output.filename });
    seen.add(output.filename);
  }
  return parsed;
}
