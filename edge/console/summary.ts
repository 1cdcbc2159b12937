import { parseArgv } from "../../shared/ffmpeg/parse";
import { tokenize } from "../../shared/ffmpeg/tokenize";
import type { OptionUse } from "../../shared/ffmpeg/types";

/** What the task list shows of a command: the inputs by name, the outputs, and what is done to them. */
export interface CommandSummary {
  inputs: { url: string; name: string }[];
  outputs: string[];
  /** The options that say what the command does (filters first), without the inputs and outputs. */
  operations: string;
  /** One line: "in.mp4 → small.mp4 · scale=640:-2". */
  text: string;
}

/** Options that say nothing about what a command does, left out of the summary. */
const QUIET = new Set(["y", "n", "hide_banner", "nostdin", "loglevel", "v", "stats", "nostats", "progress", "threads"]);
const FILTERS = new Set(["vf", "af", "filter", "filter_complex", "lavfi"]);

/**
 * Summarises a stored command for the task list. `nameOf` gives an input URL's display name
 * (the original name of an upload); otherwise the URL's last path segment is shown. A command
 * that no longer parses (the policy may have changed since it ran) is shown as written.
 */
export function summarizeCommand(command: string, nameOf: (url: string) => string | undefined = () => undefined): CommandSummary {
  let parsed;
  try {
    parsed = parseArgv(tokenize(command));
  } catch {
    return { inputs: [], outputs: [], operations: "", text: command };
  }
  const inputs = parsed.inputs.map((input) => ({ url: input.url, name: nameOf(input.url) ?? lastSegment(input.url) }));
  const outputs = parsed.outputs.map((output) => output.filename);
  const uses = [...parsed.globals, ...parsed.inputs.flatMap((input) => input.options), ...parsed.outputs.flatMap((output) => output.options)].filter((use) => !QUIET.has(use.base));
  const filters = uses.filter((use) => FILTERS.has(use.base)).map((use) => use.value ?? "");
  const others = uses.filter((use) => !FILTERS.has(use.base)).map(written);
  const operations = [...filters, ...others].join(" ");
  return { inputs, outputs, operations, text: lineOf(inputs, outputs, operations) };
}

/** The same summary with inputs named by `nameOf` where it knows them. */
export function renameInputs(summary: CommandSummary, nameOf: (url: string) => string | undefined): CommandSummary {
  if (summary.inputs.length === 0) return summary;
  const inputs = summary.inputs.map((input) => ({ url: input.url, name: nameOf(input.url) ?? input.name }));
  return { ...summary, inputs, text: lineOf(inputs, summary.outputs, summary.operations) };
}

function lineOf(inputs: CommandSummary["inputs"], outputs: string[], operations: string): string {
  return `${inputs.map((input) => input.name).join(", ")} → ${outputs.join(", ")}${operations ? ` · ${operations}` : ""}`;
}

function written(use: OptionUse): string {
  if (use.value === undefined) return `-${use.name}`;
  return /[\s"'\\]/.test(use.value) || use.value === "" ? `-${use.name} "${use.value.replace(/["\\]/g, "\\$&")}"` : `-${use.name} ${use.value}`;
}

/** "https://example.com/media/In%20Clip.mp4?sig=…" → "In Clip.mp4"; the URL itself when it has no path. */
function lastSegment(url: string): string {
  try {
    const segment = new URL(url).pathname.split("/").pop() ?? "";
    return segment ? decodeURIComponent(segment) : url;
  } catch {
    return url;
  }
}

/** The key of an upload of ours that a URL names (`<PUBLIC_URL or CN_PUBLIC_URL>/uploads/…`). */
export function uploadKeyOf(url: string, origins: readonly string[]): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (!origins.some((origin) => parsed.origin === new URL(origin).origin)) return undefined;
  if (!parsed.pathname.startsWith("/uploads/")) return undefined;
  try {
    return decodeURIComponent(parsed.pathname.slice(1));
  } catch {
    return undefined;
  }
}
