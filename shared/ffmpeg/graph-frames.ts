import { newNotes } from "./context";
import type { Frame } from "./filter-geometry";
import { checkGraphFrames, type InputFrames } from "./filters";
import type { PolicyLimits } from "./limits";
import { OPTIONS } from "./options";
import type { ParsedCommand } from "./types";
import type { VideoSize } from "./values";

/** Distinct sizes walked one by one for a stream ffmpeg chooses itself; past this many, their largest sides are taken together. */
const MAX_CHOSEN_SIZES = 16;
/** Video streams whose two orientations are walked in every combination; the others are taken at their larger side both ways. */
const MAX_TURNED_STREAMS = 3;

type InputVideo = readonly (readonly VideoSize[] | undefined)[];

/**
 * Judges every frame the command's filter graphs make from the sizes of the inputs' video
 * streams, as ffmpeg reported them (`inputVideo[N]`, in stream order): what submission could
 * not bound because it followed from an input file (`[0:v][1:v]hstack`, `tile` of input
 * frames, `scale=…:force_original_aspect_ratio=increase`) is bounded here, before a later
 * `scale` or `crop` hides it from the outputs. A labelled stream (`[1:v]`, `[0:v:1]`) is the
 * stream ffmpeg picks for it; a stream ffmpeg chooses itself (`-vf`, an unlabelled pad) may be
 * any input's video, so the graphs are walked once for each size. ffmpeg turns a stream whose
 * file says it is rotated (a phone's portrait video) before the graph, and the reported size
 * is the stored one, so each stream is also walked turned. `settled` says every input has been
 * described (ffmpeg has moved on to its outputs): a frame that follows from the inputs but
 * cannot be bounded is then refused. Throws the policy's LIMIT_EXCEEDED AppError.
 */
export function checkFramesFromInputs(parsed: ParsedCommand, limits: PolicyLimits, inputVideo: InputVideo, settled: boolean): void {
  const sizes = distinct(inputVideo.flatMap((streams) => (streams ?? []).flatMap((size) => [size, turned(size)])));
  const chosen: (Frame | undefined)[] = sizes.length === 0 ? [undefined] : sizes.length <= MAX_CHOSEN_SIZES ? sizes.map((size) => ({ ...size, exact: true })) : [largest(sizes)];
  const context = { limits, inputUrls: parsed.inputs.map((input) => input.url), inputFormats: parsed.inputs.map(() => undefined), notes: newNotes() };
  for (const orientation of orientations(inputVideo)) {
    for (const frame of chosen) {
      const frameOf: InputFrames = (label) => (label === undefined ? frame : labelledFrame(label, orientation));
      for (const use of [...parsed.globals, ...parsed.outputs.flatMap((output) => output.options)]) {
        if (use.value !== undefined && OPTIONS[use.base]?.rewrite === "filter-graph") checkGraphFrames(use.value, context, frameOf, settled);
      }
    }
  }
}

/** The inputs' video streams, each as stored and turned (the first MAX_TURNED_STREAMS that are not square; the rest bounded both ways). */
function orientations(inputVideo: InputVideo): (readonly Frame[])[][] {
  let variants: Frame[][][] = [inputVideo.map(() => [])];
  let turnable = MAX_TURNED_STREAMS;
  inputVideo.forEach((streams, input) => {
    for (const size of streams ?? []) {
      const square = size.width === size.height;
      const ways: Frame[] = square ? [{ ...size, exact: true }] : turnable > 0 ? [{ ...size, exact: true }, { ...turned(size), exact: true }] : [largest([size, turned(size)])];
      if (ways.length > 1) turnable--;
      variants = variants.flatMap((variant) => ways.map((way) => variant.map((list, index) => (index === input ? [...list, way] : list))));
    }
  });
  return variants;
}

function turned(size: VideoSize): VideoSize {
  return { width: size.height, height: size.width };
}

/**
 * ffmpeg links `[N:v]` to input N's first video stream and `[N:v:K]` to its K-th
 * (ffmpeg_filter.c), as `[N]` when N has one; another is taken at the largest of N's frames.
 */
function labelledFrame(label: string, inputVideo: readonly (readonly Frame[])[]): Frame | undefined {
  const match = /^(\d+)(?::(.*))?$/.exec(label);
  if (!match) return undefined;
  const streams = inputVideo[Number(match[1])] ?? [];
  const specifier = match[2];
  if (specifier !== undefined && /^[adst](?::|$)/.test(specifier)) return undefined;
  const index = (specifier === undefined && streams.length === 1) || specifier === "v" ? 0 : /^v:(\d+)$/.exec(specifier ?? "")?.[1];
  if (index !== undefined) return streams[Number(index)];
  return streams.length === 0 ? undefined : largest(streams);
}

function largest(sizes: readonly VideoSize[]): Frame {
  return { width: Math.max(...sizes.map((size) => size.width)), height: Math.max(...sizes.map((size) => size.height)) };
}

function distinct(sizes: readonly VideoSize[]): VideoSize[] {
  return [...new Map(sizes.map((size) => [`${size.width}x${size.height}`, size])).values()];
}
