/**
 * The caps a command must stay under. The defaults suit the service's plans; a caller may
 * pass tighter or looser ones to `checkCommand` (for example per plan).
 */
export interface PolicyLimits {
  /** Characters in the command line; a longer command is answered 413. */
  maxCommandLength: number;
  /** Words in the command line after shell-style splitting. */
  maxTokens: number;
  maxInputs: number;
  maxOutputs: number;
  /** Longest `-t` / `-to`, source-filter or padding duration, in seconds. */
  maxDurationSeconds: number;
  /** Largest frame count: `-frames`, `tpad` stop, `zoompan` d... */
  maxFrames: number;
  /** Most repeats of `-stream_loop` and of the `loop` / `aloop` filters; endless loops are never allowed. */
  maxLoops: number;
  /** Frames the `loop` filter may hold in memory to repeat them. */
  maxLoopFrames: number;
  /** Samples the `aloop` filter may hold in memory to repeat them. */
  maxLoopSamples: number;
  /** Largest frame width and height anywhere in the command (`-s`, `scale=`, `pad=`, sources...). */
  maxWidth: number;
  maxHeight: number;
  /** Largest frame area, width × height. */
  maxPixels: number;
  /** `-threads`, `-filter_threads`, `-filter_complex_threads` and a filter's `threads=`. */
  maxThreads: number;
  /** Largest frame rate (`-r`, `-framerate`, `fps=`...). */
  maxFrameRate: number;
  /** Largest audio sample rate (`-ar`, `aresample=`, audio sources...). */
  maxSampleRate: number;
  /** Filters across all the command's filter graphs. */
  maxFilters: number;
}

export const DEFAULT_LIMITS: Readonly<PolicyLimits> = Object.freeze({
  maxCommandLength: 16 * 1024,
  maxTokens: 1000,
  maxInputs: 10,
  maxOutputs: 20,
  maxDurationSeconds: 3 * 60 * 60,
  maxFrames: 500_000,
  maxLoops: 10,
  maxLoopFrames: 1000,
  maxLoopSamples: 60 * 48_000,
  maxWidth: 8192,
  maxHeight: 8192,
  maxPixels: 36_000_000,
  maxThreads: 16,
  maxFrameRate: 240,
  maxSampleRate: 192_000,
  maxFilters: 200,
});

export function resolveLimits(overrides: Partial<PolicyLimits> = {}): PolicyLimits {
  return { ...DEFAULT_LIMITS, ...overrides };
}
