import type { PolicyLimits } from "./limits";
import type { InputSpec, OptionUse, OutputSpec, ParsedCommand } from "./types";

/** What the checks learn while walking a command, for the rules that need the whole of it. */
export interface PolicyNotes {
  /** Tokens (filter names, `-loop`) that generate media without end unless an output is bounded. */
  unbounded: string[];
  /** Files an option makes ffmpeg write besides the outputs (`-hls_segment_filename`, `-master_pl_name`...). */
  extraOutputs: string[];
  /** Filters seen so far across all graphs. */
  filters: number;
}

/** What a filter-graph check may consult. */
export interface GraphContext {
  limits: PolicyLimits;
  /** The task's input URLs: the only files `subtitles=` / `ass=` may name. */
  inputUrls: readonly string[];
  /** Each input's forced format (its `-f`), in the same order; undefined where ffmpeg probes. */
  inputFormats: readonly (string | undefined)[];
  notes: PolicyNotes;
}

export type OptionScope = "global" | "input" | "output";

/** What an option-value check may consult. */
export interface CheckContext extends GraphContext {
  parsed: ParsedCommand;
  use: OptionUse;
  scope: OptionScope;
  /** The input or output the option belongs to (undefined for global options). */
  owner?: InputSpec | OutputSpec;
}

export function newNotes(): PolicyNotes {
  return { unbounded: [], extraOutputs: [], filters: 0 };
}
