import type { Command } from "commander";
import { connect, type GlobalOptions } from "../client";
import { commandFromWords, userCwd } from "../context";
import { printJson, printLine } from "../output";
import { withPlaceholderInputs } from "../placeholders";

export function registerValidate(program: Command): void {
  program
    .command("validate")
    .argument("<command...>", "the ffmpeg command, as for run")
    .description("check a command against the service's policy without running it (local inputs count as uploaded)")
    .option("--json", "print the verdict as JSON")
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (words: string[], options: { json?: boolean }) => {
      const { ff } = await connect(program.opts<GlobalOptions>());
      const { command, local } = await withPlaceholderInputs(commandFromWords(words), userCwd());
      const verdict = await ff.tasks.validate(command);
      const inputs = verdict.inputs.map((input) => local.get(input) ?? input);
      if (options.json) return printJson({ ...verdict, inputs });
      printLine(`valid: ${inputs.length} input${inputs.length === 1 ? "" : "s"} (${inputs.join(", ")}), output${verdict.outputs.length === 1 ? "" : "s"} ${verdict.outputs.join(", ")}`);
    });
}
