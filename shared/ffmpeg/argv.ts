import { AppError } from "../errors";
import { renderFilterGraph } from "./filters";
import { OPTIONS } from "./options";
import type { OptionUse, ParsedCommand } from "./types";

export interface LocalPaths {
  /** Local file of each input, in command order (downloaded before ffmpeg starts). */
  inputPaths: readonly string[];
  /** The job's output directory; every output is written directly inside it. */
  outputDir: string;
}

/** Options the service always sets, before anything from the command. */
const SERVICE_OPTIONS = ["-nostdin", "-hide_banner", "-nostats", "-y", "-progress", "pipe:1"];

/**
 * A log level quieter than info hides the stream information the transcoder's runtime guard
 * reads (every output's frame size, frame rate and sample rate), so the command's is left out.
 */
function hidesStreamInformation(use: OptionUse): boolean {
  return (use.base === "loglevel" || use.base === "v") && /(^|\+)(quiet|panic|fatal|error|warning)$/.test(use.value ?? "");
}

/**
 * The argv ffmpeg is spawned with (without the program itself): the service's own options,
 * then the command's, with every input replaced by its local copy (read with the file
 * protocol only), every output and every file an option names placed in the output
 * directory, and every filter graph re-written from what the policy checked, with
 * `subtitles=` / `ass=` pointed at the local copy of the input they name.
 *
 * @example
 * buildArgv(checkCommand("ffmpeg -i https://example.com/a.mp4 -c:v libx264 out.mp4"), {
 *   inputPaths: ["/job/in/0"],
 *   outputDir: "/job/out",
 * });
 * // ["-nostdin", "-hide_banner", "-nostats", "-y", "-progress", "pipe:1",
 * //  "-protocol_whitelist", "file", "-i", "/job/in/0", "-c:v", "libx264", "/job/out/out.mp4"]
 */
export function buildArgv(parsed: ParsedCommand, paths: LocalPaths): string[] {
  if (paths.inputPaths.length !== parsed.inputs.length) {
    throw new AppError("INTERNAL", `buildArgv got ${paths.inputPaths.length} local paths for ${parsed.inputs.length} inputs.`);
  }
  const rewrite = valueRewriter(parsed, paths);
  const argv = [...SERVICE_OPTIONS];
  for (const use of parsed.globals) if (!hidesStreamInformation(use)) argv.push(...optionArgs(use, rewrite));
  parsed.inputs.forEach((input, index) => {
    for (const use of input.options) argv.push(...optionArgs(use, rewrite));
    argv.push("-protocol_whitelist", "file", "-i", paths.inputPaths[index]!);
  });
  for (const output of parsed.outputs) {
    for (const use of output.options) argv.push(...optionArgs(use, rewrite));
    argv.push(joinPath(paths.outputDir, output.filename));
  }
  return argv;
}

type ValueRewriter = (use: OptionUse, value: string) => string;

function valueRewriter(parsed: ParsedCommand, paths: LocalPaths): ValueRewriter {
  const inputUrls = parsed.inputs.map((input) => input.url);
  const localPathOf = (url: string) => {
    const index = inputUrls.indexOf(url);
    if (index === -1) throw new AppError("INTERNAL", "A filter names a file that is not one of the command's inputs; the command was not checked.");
    return paths.inputPaths[index]!;
  };
  return (use, value) => {
    switch (OPTIONS[use.base]?.rewrite) {
      case "output-path":
        return joinPath(paths.outputDir, value);
      case "filter-graph":
        return renderFilterGraph(value, localPathOf, inputUrls);
      default:
        return value;
    }
  };
}

function optionArgs(use: OptionUse, rewrite: ValueRewriter): string[] {
  return use.value === undefined ? [`-${use.name}`] : [`-${use.name}`, rewrite(use, use.value)];
}

function joinPath(dir: string, name: string): string {
  return `${dir.replace(/\/+$/, "")}/${name}`;
}
