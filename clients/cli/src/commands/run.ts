import { mkdir } from "node:fs/promises";
import { relative } from "node:path";
import { type Command, InvalidArgumentError } from "commander";
import { deliveredOnly } from "../../../sdk/src/deliveries";
import { FFedge, FFedgeError, type NewTask, type RunProgress, type Task, type TaskDestination } from "../../../sdk/src/index";
import { connect, type GlobalOptions } from "../client";
import { commandFromWords, resolveFromUser, userCwd } from "../context";
import { UsageError } from "../errors";
import { withInterrupt } from "../interrupt";
import { formatBytes, note, printJson, printLine } from "../output";
import { collectParam } from "../params";
import { ProgressReporter, progressMode } from "../progress";
import { presetParams } from "./presets";

interface RunFlags {
  out?: string;
  json?: boolean;
  wait: boolean;
  download: boolean;
  metadata?: boolean;
  timeout?: number;
  preset?: string;
  param?: [string, string][];
  step?: string[];
  destination?: TaskDestination;
}

export function registerRun(program: Command): void {
  program
    .command("run")
    .argument("[command...]", 'the ffmpeg command, quoted as one argument ("ffmpeg -i ./in.mp4 out.mp4") or as words; the leading ffmpeg is optional')
    .description("upload the command's local inputs (or a preset's file parameters), run it, follow its progress and download its outputs")
    .option("--preset <name>", "run a saved or built-in preset (ffedge presets list) instead of a command")
    .option("--param <name=value>", "a preset parameter (repeat for each); typed as the preset declares it, a local file is uploaded", collectParam)
    .option("--step <command>", "one step of a chained task (repeat, 2 to 10, in order); a step reads an earlier one's output as {{steps.K.outputs.<name>}}", (value: string, previous: string[] = []) => [...previous, value])
    .option("--out <dir>", "where outputs are saved (default: the current folder)")
    .option("--json", "print only the final task as JSON on stdout (no progress)")
    .option("--no-wait", "submit, print the task id and exit")
    .option("--no-download", "leave the outputs on the service (their URLs are in the task)")
    .option("--metadata", "ask for ffprobe metadata of each output (in --json)")
    .option("--destination <name[:only]>", "also deliver the outputs to one of your destinations; with :only, there instead of ffedge's storage", (value: string) => {
      const match = /^([A-Za-z0-9][A-Za-z0-9_.-]*)(?::(copy|only))?$/.exec(value);
      if (!match) throw new InvalidArgumentError("must be a destination's name or id, optionally followed by :copy or :only");
      return { id: match[1]!, mode: match[2] === "only" ? "only" : "copy" } satisfies TaskDestination;
    })
    .option("--timeout <seconds>", "the task's own time limit", (value: string) => {
      if (!/^[1-9][0-9]*$/.test(value)) throw new InvalidArgumentError("must be a whole number of seconds");
      return Number(value);
    })
    // ffmpeg's own options (-i, -vf, -y ...) are words of the command, not options of this CLI; ours are all long.
    .allowUnknownOption()
    .allowExcessArguments()
    .addHelpText("after", '\nExamples:\n  ffedge run "ffmpeg -i ./in.mp4 -vf scale=640:-2 out.mp4"\n  ffedge run --out renders -- -i clip.mov -c:v libx264 clip.mp4\n  ffedge run --json "-i ./in.wav out.mp3" > task.json\n  ffedge run --preset thumbnail --param video=./in.mp4 --param width=320\n  ffedge run --step "ffmpeg -i ./in.mp4 -t 5 -c copy cut.mp4" --step "ffmpeg -i {{steps.0.outputs.cut.mp4}} -vf scale=320:-2 small.mp4"')
    .action(async (words: string[], flags: RunFlags) => {
      const given = [words.length > 0, flags.preset !== undefined, flags.step !== undefined].filter(Boolean).length;
      if (given > 1) throw new UsageError("Conflicting arguments", "give a command, --preset or --step, only one of them");
      if (given === 0) throw new UsageError("Missing command", 'give the ffmpeg command ("ffmpeg -i ./in.mp4 out.mp4"), --preset <name> or --step <command>...');
      if (!flags.preset && flags.param) throw new UsageError("Misplaced --param", "--param sets a preset's parameters: use it with --preset");
      const { ff } = await connect(program.opts<GlobalOptions>());
      const task: string | NewTask = flags.preset
        ? { preset: flags.preset, params: await presetParams(ff, flags.preset, flags.param ?? []) }
        : flags.step
          ? { steps: flags.step.map((step) => ({ command: commandFromWords([step]) })) }
          : commandFromWords(words);
      await run(ff, task, flags);
    });
}

async function run(ff: FFedge, command: string | NewTask, flags: RunFlags): Promise<void> {
  const outDir = resolveFromUser(flags.out ?? ".");
  if (flags.wait && flags.download) {
    await mkdir(outDir, { recursive: true }).catch((error: Error) => {
      throw new UsageError("Cannot use --out", `${outDir}: ${error.message}`);
    });
  }
  const reporter = new ProgressReporter(progressMode(flags));
  let taskId: string | undefined;
  const onProgress = (event: RunProgress) => {
    if (event.phase === "submitted") taskId = event.task_id;
    reporter.onProgress(event);
  };
  const options = { onProgress, cwd: userCwd(), withMetadata: flags.metadata, timeoutSeconds: flags.timeout, destination: flags.destination };
  const interrupted = async () => {
    if (!taskId) return "ffedge: Interrupted: stopped before a task was submitted";
    const task = await ff.tasks.get(taskId, { signal: AbortSignal.timeout(5000) }).catch(() => undefined);
    if (task?.error_code === "CANCELED") return `ffedge: Interrupted: task ${taskId} canceled`;
    if (task?.status === "completed") return `ffedge: Interrupted: task ${taskId} completed before it could be canceled; outputs not downloaded`;
    return `ffedge: Interrupted: asked the service to cancel task ${taskId}`;
  };

  if (!flags.wait) {
    const created = await withInterrupt(reporter, (signal) => ff.run(command, { ...options, signal, wait: false }), interrupted);
    return flags.json ? printJson(created) : printLine(created.task_id);
  }

  let task: Task;
  // A failed delivery still ends the run with exit 1, but only after the outputs kept here are saved.
  let undelivered: FFedgeError | undefined;
  try {
    task = await withInterrupt(reporter, (signal) => ff.run(command, { ...options, signal }), interrupted);
  } catch (error) {
    const failed = error instanceof FFedgeError ? (error.problem as { task?: Task }).task : undefined;
    if (failed && error instanceof FFedgeError && error.code === "DELIVERY_FAILED") {
      task = failed;
      undelivered = error;
    } else {
      if (failed && flags.json) printJson(failed);
      throw error;
    }
  }
  reportDeliveries(reporter, task);
  // Outputs delivered `only` are in the bucket alone: nothing to download, their URL is printed.
  const here = (task.outputs ?? []).filter((output) => !deliveredOnly(output));
  const saved: string[] = [];
  if (flags.download) {
    await withInterrupt(
      reporter,
      async (signal) => {
        for (const output of here) {
          const path = await ff.download(output, outDir, { signal });
          saved.push(path);
          reporter.line(`Saved ${displayPath(path)} (${formatBytes(output.size)})`);
        }
      },
      () => `ffedge: Interrupted: ${task.task_id} completed; ${saved.length} of ${here.length} outputs saved`,
    );
  }
  if (flags.json) printJson(task);
  else {
    if (flags.download) for (const path of saved) printLine(displayPath(path));
    for (const output of task.outputs ?? []) if (!flags.download || deliveredOnly(output)) printLine(output.url);
    if ((task.outputs ?? []).length === 0) note(`${task.task_id} completed without outputs.`);
  }
  if (undelivered) throw undelivered;
}

/** Where each output went, on stderr: its bucket key and URL, or why its delivery failed. */
function reportDeliveries(reporter: ProgressReporter, task: Task): void {
  for (const { filename, destination } of task.outputs ?? []) {
    if (destination?.status === "delivered") reporter.line(`Delivered ${filename} to ${destination.id} as ${destination.key}${destination.url ? ` (${destination.url})` : ""}`);
    else if (destination?.status === "failed") reporter.line(`Not delivered ${filename} to ${destination.id}: ${destination.error_code ?? "INTERNAL"}${destination.error ? ` (${destination.error})` : ""}`);
  }
}

function displayPath(path: string): string {
  const shown = relative(userCwd(), path);
  return shown.startsWith("..") ? path : shown;
}
