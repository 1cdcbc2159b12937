import { readFile } from "node:fs/promises";
import type { Command } from "commander";
import type { CreatePreset, FFedge, Preset, PresetParameter } from "../../../sdk/src/index";
import { connect, type GlobalOptions } from "../client";
import { resolveFromUser } from "../context";
import { UsageError } from "../errors";
import { note, printJson, printLine, printTable, truncate } from "../output";
import { collectParam, typedParams } from "../params";
import { integer } from "./tasks";

interface CreateFlags {
  name?: string;
  command?: string;
  description?: string;
  parameters?: string;
  file?: string;
  json?: boolean;
}

export function registerPresets(program: Command): void {
  const presets = program.command("presets").description("saved command templates with typed parameters (run one with ffedge run --preset)");
  const global = () => program.opts<GlobalOptions>();

  presets
    .command("list")
    .description("the built-in presets, then yours")
    .option("--builtin", "only the built-in presets")
    .option("--mine", "only your presets")
    .option("--limit <n>", "how many (1-100)", integer(1, 100), 50)
    .option("--offset <n>", "skip this many", integer(0, 1_000_000_000))
    .option("--json", "print {total, presets} as JSON")
    .action(async (options: { builtin?: boolean; mine?: boolean; limit: number; offset?: number; json?: boolean }) => {
      if (options.builtin && options.mine) throw new UsageError("Conflicting options", "give --builtin or --mine, not both");
      const { ff } = await connect(global());
      const page = await ff.presets.list({ builtin: options.builtin ? true : options.mine ? false : undefined, limit: options.limit, offset: options.offset });
      if (options.json) return printJson(page);
      if (page.presets.length === 0) return note("No presets.");
      printTable(
        ["NAME", "KIND", "PARAMETERS", "COMMAND"],
        page.presets.map((preset) => [preset.name, preset.builtin ? "built-in" : "yours", Object.keys(preset.parameters.properties).join(",") || "-", truncate(preset.command, 60)]),
      );
      if (page.total > page.presets.length + (options.offset ?? 0)) note(`${page.presets.length} of ${page.total}; --offset ${(options.offset ?? 0) + page.presets.length} for more`);
    });

  presets
    .command("show")
    .argument("<preset>", "a preset's name or id")
    .description("one preset: its command and typed parameters")
    .option("--json", "print the preset as JSON")
    .action(async (name: string, options: { json?: boolean }) => {
      const { ff } = await connect(global());
      const preset = await ff.presets.get(name);
      if (options.json) return printJson(preset);
      printPreset(preset);
    });

  presets
    .command("create")
    .description("save a preset: --name, --command and --parameters, or --file with the whole preset as JSON")
    .option("--name <name>", "1-64 lower-case letters, digits, '-' or '_'")
    .option("--command <command>", "the ffmpeg command with {{placeholders}}")
    .option("--description <text>", "what it does")
    .option("--parameters <file-or-json>", "the parameters' JSON Schema object, as a file or inline JSON")
    .option("--file <preset.json>", "the whole preset {name, command, parameters, description}; the other options override its fields")
    .option("--json", "print the saved preset as JSON")
    .addHelpText("after", `\nExample:\n  ffedge presets create --name small --command "ffmpeg -i {{video}} -vf scale={{width}}:-2 small.mp4" \\\n    --parameters '{"type":"object","properties":{"video":{"type":"string","examples":["https://example.com/in.mp4"]},"width":{"type":"integer","minimum":16,"maximum":1920,"default":640}},"required":["video"]}'`)
    .action(async (flags: CreateFlags) => {
      const definition = await presetFromFlags(flags);
      const { ff } = await connect(global());
      const preset = await ff.presets.create(definition);
      if (flags.json) return printJson(preset);
      printLine(preset.id);
      note(`Saved preset ${preset.name}; run it with: ffedge run --preset ${preset.name} --param name=value`);
    });

  presets
    .command("delete")
    .alias("rm")
    .argument("<preset>", "one of your presets, by name or id")
    .description("delete one of your presets")
    .action(async (name: string) => {
      const { ff } = await connect(global());
      await ff.presets.delete(name);
      note(`Deleted preset ${name}.`);
    });

  presets
    .command("expand")
    .argument("<preset>", "a preset's name or id")
    .description("the command a preset gives with these values, without running it")
    .option("--param <name=value>", "a parameter's value (repeat for each); typed as the preset declares it", collectParam)
    .option("--json", "print {command, inputs, outputs} as JSON")
    .action(async (name: string, options: { param?: [string, string][]; json?: boolean }) => {
      const { ff } = await connect(global());
      const expanded = await ff.presets.expand(name, await presetParams(ff, name, options.param ?? []));
      if (options.json) return printJson(expanded);
      printLine(expanded.command);
    });
}

/** `--param` values typed by the preset's own schema (read from the service first). */
export async function presetParams(ff: FFedge, preset: string, pairs: [string, string][]): Promise<Record<string, unknown>> {
  return typedParams(pairs, (await ff.presets.get(preset)).parameters);
}

async function presetFromFlags(flags: CreateFlags): Promise<CreatePreset> {
  const base = flags.file ? await jsonArgument(flags.file, "--file") : {};
  if (typeof base !== "object" || base === null || Array.isArray(base)) throw new UsageError("Invalid --file", "the file must hold one JSON object {name, command, parameters}");
  const preset = { ...(base as Record<string, unknown>) };
  if (flags.name !== undefined) preset.name = flags.name;
  if (flags.command !== undefined) preset.command = flags.command;
  if (flags.description !== undefined) preset.description = flags.description;
  if (flags.parameters !== undefined) preset.parameters = await jsonArgument(flags.parameters, "--parameters");
  if (typeof preset.name !== "string" || typeof preset.command !== "string") throw new UsageError("Missing preset fields", "a preset needs --name and --command (or both in --file)");
  return preset as unknown as CreatePreset;
}

/** Inline JSON when it starts with `{`, else a file read from the user's folder. */
async function jsonArgument(value: string, flag: string): Promise<unknown> {
  const inline = value.trimStart().startsWith("{");
  let text = value;
  if (!inline) {
    const path = resolveFromUser(value);
    text = await readFile(path, "utf8").catch((error: Error) => {
      throw new UsageError(`Cannot read ${flag}`, `${path}: ${error.message}`);
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new UsageError(`Invalid ${flag}`, `${inline ? "the value" : value} is not JSON: ${(error as Error).message}`);
  }
}

function printPreset(preset: Preset): void {
  printLine(`${preset.name}  ${preset.builtin ? "built-in" : preset.id}`);
  if (preset.description) printLine(`about     ${preset.description}`);
  printLine(`command   ${preset.command}`);
  const required = new Set(preset.parameters.required ?? []);
  for (const [name, parameter] of Object.entries(preset.parameters.properties)) {
    printLine(`param     ${name}${required.has(name) ? " (required)" : ""}  ${describeParameter(parameter)}`);
  }
}

function describeParameter(parameter: PresetParameter): string {
  const parts: string[] = [parameter.type];
  if ("minimum" in parameter || "maximum" in parameter) parts.push(`${parameter.minimum ?? ""}..${parameter.maximum ?? ""}`);
  if ("enum" in parameter && parameter.enum) parts.push(`one of ${parameter.enum.join(", ")}`);
  if (parameter.default !== undefined) parts.push(`default ${String(parameter.default)}`);
  if (parameter.description) parts.push(`- ${parameter.description}`);
  return parts.join(" ");
}
