import { AppError } from "../../shared/errors";
import type { ParsedCommand } from "../../shared/ffmpeg/index";
import type { TranscoderConfig } from "../config";
import { FORMAT_WHITELIST, isAllowedFormat, parseFormatName } from "../ffmpeg/probe";
import type { FfmpegService } from "../ffmpeg/service";
import type { JobContext } from "../sandbox/isolation";
import { describe, downloadToFile } from "../lib/guarded-fetch";
import { JobFailure, workspaceFull } from "./failure";
import { type Workspace, inputPath, isNoSpace } from "./workspace";

/**
 * Downloads every input into `in/` through the guarded fetcher, before ffmpeg starts: ffmpeg
 * itself never touches the network. A dropped connection or a gateway error (the edge restarting
 * under the download) is tried again at the pace of the job's reports. Returns the local paths in
 * command order. `local`: inputs already in the job folder (a chained task's earlier outputs),
 * by index; `firstFile`: the number of the first file in `in/` (a chained task's later steps).
 */
export async function downloadInputs(parsed: ParsedCommand, workspace: Workspace, config: TranscoderConfig, signal: AbortSignal, local: readonly (string | undefined)[] = [], firstFile = 0): Promise<string[]> {
  const paths: string[] = [];
  for (const [index, input] of parsed.inputs.entries()) {
    const already = local[index];
    if (already !== undefined) {
      paths.push(already);
      continue;
    }
    const file = inputPath(workspace, firstFile + index);
    try {
      await downloadToFile(input.url, file, {
        allowHosts: config.devFetchAllowHosts,
        maxBytes: config.maxInputBytes,
        timeoutMs: config.downloadTimeoutSeconds * 1000,
        signal,
        egress: config.egress,
        retry: { baseDelayMs: config.timings.retryBaseMs, maxDelayMs: config.timings.retryMaxDelayMs },
      });
    } catch (error) {
      signal.throwIfAborted();
      if (isNoSpace(error)) throw workspaceFull(`Input ${index + 1} (${describe(input.url)}) could not be downloaded`);
      const detail = error instanceof AppError ? error.detail : "unexpected error";
      throw new JobFailure("INPUT_DOWNLOAD_FAILED", `Input ${index + 1} (${describe(input.url)}) could not be downloaded: ${detail}`);
    }
    paths.push(file);
  }
  return paths;
}

/**
 * The inputs ffmpeg's own `-format_whitelist` cannot vouch for: one read with the user's `-f`
 * (ffmpeg then trusts the name, not the bytes) and one a filter opens again by itself
 * (`subtitles=`, `ass=`: libavfilter probes the file with no whitelist at all). Every other
 * input is judged by ffmpeg from its bytes against the whitelist when it opens it.
 */
export function inputsToScreen(parsed: ParsedCommand, argv: readonly string[], inputPaths: readonly string[]): number[] {
  const screened: number[] = [];
  for (const [index, input] of parsed.inputs.entries()) {
    const forced = input.options.some((use) => use.base === "f");
    // The path as a whole word: ".../input-1" must not match inside ".../input-10".
    const named = new RegExp(`${escape(inputPaths[index]!)}(?![0-9])`);
    const reopened = argv.some((arg, position) => argv[position - 1] !== "-i" && named.test(arg));
    if (forced || reopened) screened.push(index);
  }
  return screened;
}

/**
 * Judges each of `indexes` by its bytes, as a filter re-opening it would: ffprobe detects the
 * format (never with the user's `-f`), restricted to the demuxer allow-list, reading only the
 * header. `inputPaths` are as ffmpeg sees them. An input whose bytes are a playlist, a script or anything else off the list is refused.
 */
export async function screenInputs(
  indexes: readonly number[],
  parsed: ParsedCommand,
  job: JobContext,
  inputPaths: readonly string[],
  ffmpeg: FfmpegService,
  signal: AbortSignal,
): Promise<void> {
  await Promise.all(
    indexes.map(async (index) => {
      const label = `Input ${index + 1} (${describe(parsed.inputs[index]!.url)})`;
      const outcome = await ffmpeg.probe(inputPaths[index]!, { job, signal, whitelist: FORMAT_WHITELIST, formatOnly: true });
      signal.throwIfAborted();
      const format = outcome.json === undefined ? undefined : parseFormatName(outcome.json);
      if (format === undefined || !isAllowedFormat(format)) {
        throw new JobFailure(
          "INPUT_FORMAT_NOT_ALLOWED",
          outcome.formatRefused || format !== undefined
            ? `${label} is not in a format the service accepts (playlists, concat scripts, devices and generators are refused).`
            : `${label} could not be read as audio, video, an image or subtitles.`,
        );
      }
    }),
  );
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
