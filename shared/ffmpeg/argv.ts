import type { OptionUse, ParsedCommand } from "./types";

export interface LocalPaths {
  /** Local file of each input, in command order (downloaded before ffmpeg starts). */
  inputPaths: readonly string[];
  /** The job's output directory; every output is written directly inside it. */
  outputDir: string;
}

/**
 * The argv ffmpeg is spawned with (without the program itself): the service's own options,
 * then the user's options with every input rewritten to its local copy and every output
 * placed in the job's output directory. Inputs are read with the file protocol only.
 */
export function buildArgv(parsed: ParsedCommand, paths: LocalPaths): string[] {
  const argv = ["-nostdin", "-hide_banner", "-nostats", "-y", "-progress", "pipe:1"];
  for (const use of parsed.globals) argv.push(...optionArgs(use, paths));
  parsed.inputs.forEach((input, index) => {
    for (const use of input.options) argv.push(...optionArgs(use, paths));
    argv.push("-protocol_whitelist", "file", "-i", paths.inputPaths[index]!);
  });
  for (const output of parsed.outputs) {
    for (const use of output.options) argv.push(...optionArgs(use, paths));
    argv.push(joinPath(paths.outputDir, output.filename));
  }
  return argv;
}

/** Options whose value names an output file are pointed into the output directory too. */
const OUTPUT_PATH_OPTIONS = new Set(["hls_segment_filename"]);

function optionArgs(use: OptionUse, paths: LocalPaths): string[] {
  if (use.value === undefined) return [`-${use.name}`];
  const value = OUTPUT_PATH_OPTIONS.has(use.base) ? joinPath(paths.outputDir, use.value) : use.value;
  return [`-${use.name}`, value];
}

function joinPath(dir: string, name: string): string {
  return `${dir.replace(/\/+$/, "")}/${name}`;
}
