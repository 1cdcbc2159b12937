import { AppError } from "../../shared/errors";
import type { ParsedCommand } from "../../shared/ffmpeg/index";
import type { TranscoderConfig } from "../config";
import { FORMAT_WHITELIST, checkInput, parseProbe, timingOf } from "../ffmpeg/probe";
import type { InputTiming } from "../ffmpeg/progress";
import type { FfmpegService } from "../ffmpeg/service";
import { describe, downloadToFile } from "../lib/guarded-fetch";
import { JobFailure } from "./failure";
import { type Workspace, inputPath } from "./workspace";

/**
 * Downloads every input into `in/` through the guarded fetcher, before ffmpeg starts: ffmpeg
 * itself never touches the network. Returns the local paths in command order.
 */
export async function downloadInputs(parsed: ParsedCommand, workspace: Workspace, config: TranscoderConfig, signal: AbortSignal): Promise<string[]> {
  const paths: string[] = [];
  for (const [index, input] of parsed.inputs.entries()) {
    const file = inputPath(workspace, index);
    try {
      await downloadToFile(input.url, file, {
        allowHosts: config.devFetchAllowHosts,
        maxBytes: config.maxInputBytes,
        timeoutMs: config.downloadTimeoutSeconds * 1000,
        signal,
      });
    } catch (error) {
      signal.throwIfAborted();
      const detail = error instanceof AppError ? error.detail : "unexpected error";
      throw new JobFailure("INPUT_DOWNLOAD_FAILED", `Input ${index + 1} (${describe(input.url)}) could not be downloaded: ${detail}`);
    }
    paths.push(file);
  }
  return paths;
}

/**
 * Probes every downloaded input with the demuxer allow-list (with the input's own `-f`, if
 * any, so it is read as ffmpeg will read it) and refuses what is not plain media within the
 * pixel cap. Returns what progress reporting needs to know about each input.
 */
export async function probeInputs(
  parsed: ParsedCommand,
  workspace: Workspace,
  inputPaths: readonly string[],
  deps: { config: TranscoderConfig; ffmpeg: FfmpegService },
  signal: AbortSignal,
): Promise<InputTiming[]> {
  const timings: InputTiming[] = [];
  for (const [index, input] of parsed.inputs.entries()) {
    const label = `Input ${index + 1} (${describe(input.url)})`;
    const forceFormat = input.options.findLast((use) => use.base === "f")?.value;
    const outcome = await deps.ffmpeg.probe(inputPaths[index]!, { cwd: workspace.root, signal, whitelist: FORMAT_WHITELIST, forceFormat });
    signal.throwIfAborted();
    const probe = outcome.json === undefined ? undefined : parseProbe(outcome.json);
    if (!probe) {
      throw new JobFailure(
        "INPUT_FORMAT_NOT_ALLOWED",
        outcome.formatRefused
          ? `${label} is not in a format the service accepts (playlists, concat scripts, devices and generators are refused).`
          : `${label} could not be read as audio, video, an image or subtitles.`,
      );
    }
    checkInput(probe, label, deps.config.maxInputPixels);
    timings.push(timingOf(probe));
  }
  return timings;
}
