/** One use of an option in a command: `-c:v libx264` is { name: "c:v", base: "c", value: "libx264" }. */
export interface OptionUse {
  /** As written, without the leading dash, stream specifier included. */
  name: string;
  /** The option without its stream specifier. */
  base: string;
  value?: string;
}

export interface InputSpec {
  url: string;
  options: OptionUse[];
}

export interface OutputSpec {
  filename: string;
  options: OptionUse[];
}

/** An ffmpeg command line split by position: what applies globally, to each input and to each output. */
export interface ParsedCommand {
  globals: OptionUse[];
  inputs: InputSpec[];
  outputs: OutputSpec[];
}
