import { Command, Option } from "commander";
import { registerAccount } from "./commands/account";
import { registerFiles } from "./commands/files";
import { registerPresets } from "./commands/presets";
import { registerRun } from "./commands/run";
import { registerTasks } from "./commands/tasks";
import { registerValidate } from "./commands/validate";


export const VERSION = "0.1.0";

export function buildProgram(): Command {
  const program = new Command("ffedge")
    .description("ffmpeg as a cloud service: run ffmpeg commands on ffedge from your terminal")
    .version(VERSION, "-v, --version")
    .addOption(new Option("--url <url>", "the service's base URL (overrides FFEDGE_URL and the config file)"))
    .addOption(new Option("--debug", "print the stack of an unexpected error (also FFEDGE_DEBUG=1)"))
    .configureOutput({ outputError: (text, write) => write(`ffedge: Usage: ${text.replace(/^error: /, "").trim().replace(/\s*\n\s*/g, " ")} (ffedge --help)\n`) })
    .addHelpText("after", "\nThe API key comes from FFEDGE_API_KEY, else the config file `ffedge login` writes.\nExit codes: 0 ok, 1 task or API failure, 2 usage error, 130 interrupted.");
  registerRun(program);
  registerAccount(program);
  registerTasks(program);
  registerPresets(program);
  registerFiles(program);
  registerValidate(program);
  for (const command of [program, ...allSubcommands(program)]) command.exitOverride();
  return program;
}

function allSubcommands(command: Command): Command[] {
  return command.commands.flatMap((child) => [child, ...allSubcommands(child)]);
}

