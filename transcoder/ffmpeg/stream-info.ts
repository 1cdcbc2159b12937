import { parseFfmpegTime, parseRate } from "./progress";

/** One stream as ffmpeg describes it on stderr (`Stream #0:0: Video: h264 ..., 1920x1080, 25 fps`). */
export interface StreamFacts {
  kind: "video" | "audio" | "subtitle" | "data" | "attachment";
  width?: number;
  height?: number;
  frameRate?: number;
  sampleRate?: number;
}

/** One input or output file as ffmpeg describes it before it starts transcoding. */
export interface FileFacts {
  /** Demuxer (inputs) or muxer (outputs) name. */
  format: string;
  durationSeconds?: number;
  streams: StreamFacts[];
}

export interface StreamInfoListener {
  /** An input's `Duration:` line or one of its streams was read. */
  onInput?: (index: number, facts: FileFacts) => void;
  /** One of an output's streams was read (ffmpeg prints them once its encoders are set up). */
  onOutputStream?: (index: number, stream: StreamFacts) => void;
  /** A "Stream mapping" line: output `output`'s stream `stream`, and whether it is copied (`-c copy`) rather than encoded. */
  onStreamMapping?: (output: number, stream: number, copied: boolean) => void;
}

// ffmpeg prints file headers at column 0 and their facts indented by two spaces. Metadata values
// (which a file's author chooses) are indented further, also on their continuation lines, so
// they can never pose as one of these lines.
const FILE_HEADER = /^(Input|Output) #(\d+), (.+?), (?:from|to) '/;
const DURATION = /^ {2}Duration: ([^,]+)/;
const STREAM = /^ {2}Stream #\d+:\d+\S*: (Video|Audio|Subtitle|Data|Attachment): (.*)$/;
// "  Stream #0:0 -> #0:0 (copy)", "  Stream #0:1 -> #0:1 (aac (native) -> aac (native))", "  scale:default -> Stream #0:0 (libx264)".
const MAPPING = /^ {2}\S.* -> (?:Stream )?#(\d+):(\d+) \((.*)\)$/;

/**
 * Reads what ffmpeg itself says about its inputs and outputs on stderr (log level info) as it
 * arrives in arbitrary chunks: the facts the separate ffprobe of every input used to provide
 * (duration and frame rate for progress, frame sizes for the pixel cap), and the frame size and
 * sample rate of every output stream for the runtime guard.
 */
export class StreamInfoParser {
  private partial = "";
  private section: { kind: "Input" | "Output"; index: number; facts: FileFacts } | undefined;
  readonly inputs: FileFacts[] = [];

  constructor(private readonly listener: StreamInfoListener) {}

  push(chunk: Buffer | string): void {
    const lines = (this.partial + chunk.toString()).split(/\r?\n|\r/);
    this.partial = lines.pop() ?? "";
    // A runaway line (ffmpeg never writes one) is not kept whole.
    if (this.partial.length > 64 * 1024) this.partial = "";
    for (const line of lines) this.line(line);
  }

  private line(line: string): void {
    const header = FILE_HEADER.exec(line);
    if (header) {
      const kind = header[1] as "Input" | "Output";
      const facts: FileFacts = { format: header[3]!, streams: [] };
      this.section = { kind, index: Number(header[2]), facts };
      if (kind === "Input") this.inputs[this.section.index] = facts;
      return;
    }
    if (!line.startsWith("  ")) {
      if (line.trim() !== "") this.section = undefined;
      return;
    }
    const section = this.section;
    if (!section) {
      // "Stream mapping:" ends the files' sections; its lines follow.
      const mapping = MAPPING.exec(line);
      if (mapping) this.listener.onStreamMapping?.(Number(mapping[1]), Number(mapping[2]), mapping[3] === "copy");
      return;
    }
    const duration = DURATION.exec(line);
    if (duration && section.kind === "Input") {
      const seconds = parseFfmpegTime(duration[1]!);
      if (seconds !== undefined && seconds > 0) section.facts.durationSeconds = seconds;
      this.listener.onInput?.(section.index, section.facts);
      return;
    }
    const stream = STREAM.exec(line);
    if (!stream) return;
    const facts = streamFacts(stream[1]!.toLowerCase() as StreamFacts["kind"], stream[2]!);
    section.facts.streams.push(facts);
    if (section.kind === "Input") this.listener.onInput?.(section.index, section.facts);
    else this.listener.onOutputStream?.(section.index, facts);
  }
}

function streamFacts(kind: StreamFacts["kind"], description: string): StreamFacts {
  const facts: StreamFacts = { kind };
  // Parenthesised parts ("(High)", "(avc1 / 0x31637661)", "yuv420p(tv, bt709)") hold commas and no facts we need.
  const parts = withoutParentheses(description).split(",").map((part) => part.trim());
  for (const part of parts) {
    const size = /^(\d+)x(\d+)(?:\s|$)/.exec(part);
    if (size && kind === "video" && facts.width === undefined) {
      facts.width = Number(size[1]);
      facts.height = Number(size[2]);
      continue;
    }
    const hertz = /^(\d+) Hz$/.exec(part);
    if (hertz && kind === "audio") facts.sampleRate = Number(hertz[1]);
    const fps = /^([\d.]+k?) (fps|tbr)$/.exec(part);
    if (fps && kind === "video" && (facts.frameRate === undefined || fps[2] === "fps")) {
      const rate = fps[1]!.endsWith("k") ? Number(fps[1]!.slice(0, -1)) * 1000 : parseRate(fps[1]!);
      if (rate !== undefined && Number.isFinite(rate) && rate > 0) facts.frameRate = rate;
    }
  }
  return facts;
}

function withoutParentheses(text: string): string {
  let depth = 0;
  let result = "";
  for (const char of text) {
    if (char === "(") depth++;
    else if (char === ")") depth = Math.max(0, depth - 1);
    else if (depth === 0) result += char;
  }
  return result;
}
