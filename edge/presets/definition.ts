import { AppError } from "../../shared/errors";
import { checkCommand, type CommandPolicyOptions } from "../../shared/ffmpeg";
import { quoteArgv } from "../../shared/ffmpeg/quote";
import { CreatePresetSchema, type PresetDefinition, type PresetParameter, type PresetParameters } from "../../shared/schemas/presets";
import { valueProblem } from "./values";
import { type ParameterValue, invalid, placeholderNames, substitute, templateWords } from "./template";

/**
 * A preset as it may be saved, or PRESET_INVALID naming the first problem: the parameters are
 * the supported subset of JSON Schema and consistent (ranges, patterns, defaults, examples),
 * every placeholder names a declared parameter and every parameter is used, and the command
 * passes the ffmpeg policy with sample values: each parameter's default, first example or first
 * enum value, then each number at its minimum, then at its maximum.
 */
export function checkPresetDefinition(input: unknown, policy: CommandPolicyOptions): PresetDefinition {
  const parsed = CreatePresetSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid(`${issue.path.join(".") || "preset"}: ${issue.message}.`, { field: issue.path.join(".") });
  }
  const definition = parsed.data;
  checkParameters(definition.parameters);
  const words = templateWords(definition.command);
  const declared = Object.keys(definition.parameters.properties);
  const used = placeholderNames(words);
  const unknown = used.find((name) => !declared.includes(name));
  if (unknown) throw invalid(`The placeholder {{${unknown}}} names no parameter; declare it in parameters.properties.`, { placeholder: unknown });
  const unused = declared.find((name) => !used.includes(name));
  if (unused) throw invalid(`The parameter '${unused}' is never used: put {{${unused}}} in the command or remove the parameter.`, { field: `parameters.properties.${unused}` });
  for (const samples of sampleSets(definition.parameters)) {
    const command = quoteArgv(substitute(words, samples, "PRESET_INVALID"));
    try {
      checkCommand(command, policy);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const shown = Object.entries(samples).map(([name, value]) => `${name}=${JSON.stringify(value)}`).join(", ");
      throw invalid(`With the sample values ${shown || "(none)"} the command is refused by the policy: ${error.detail}`, { policy_code: error.code, ...error.extra });
    }
  }
  return definition;
}

function checkParameters(parameters: PresetParameters): void {
  const required = parameters.required ?? [];
  const undeclared = required.find((name) => !(name in parameters.properties));
  if (undeclared) throw invalid(`parameters.required names '${undeclared}', which is not in parameters.properties.`, { field: "parameters.required" });
  if (new Set(required).size !== required.length) throw invalid("parameters.required names a parameter twice.", { field: "parameters.required" });
  for (const [name, parameter] of Object.entries(parameters.properties)) checkParameter(name, parameter, required.includes(name));
}

function checkParameter(name: string, parameter: PresetParameter, required: boolean): void {
  const field = `parameters.properties.${name}`;
  const refuse = (why: string) => invalid(`${field}: ${why}.`, { field });
  if ("minimum" in parameter && parameter.minimum !== undefined && parameter.maximum !== undefined && parameter.minimum > parameter.maximum) throw refuse("minimum is above maximum");
  if (parameter.type === "string") {
    if (parameter.minLength !== undefined && parameter.maxLength !== undefined && parameter.minLength > parameter.maxLength) throw refuse("minLength is above maxLength");
    if (parameter.pattern !== undefined && !compiles(parameter.pattern)) throw refuse("pattern is not a valid regular expression");
    if (parameter.default === undefined && parameter.examples === undefined && parameter.enum === undefined) {
      throw refuse("a string parameter needs a default, examples or enum, so that the command can be checked with a real value when it is saved");
    }
  }
  if (!required && parameter.default === undefined) throw refuse("a parameter that is not required needs a default");
  const given = [...(parameter.default === undefined ? [] : [parameter.default]), ...(parameter.examples ?? []), ...("enum" in parameter ? (parameter.enum ?? []) : [])];
  for (const value of given) {
    const problem = valueProblem(parameter, value);
    if (problem) throw refuse(`the value ${JSON.stringify(value)} (a default, example or enum value) ${problem}`);
  }
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, "u");
    return true;
  } catch {
    return false;
  }
}

/** The values the command is checked with when saved: the usual ones, then each number at its minimum, then at its maximum. */
function sampleSets(parameters: PresetParameters): Record<string, ParameterValue>[] {
  const entries = Object.entries(parameters.properties);
  const at = (bound?: "minimum" | "maximum") =>
    Object.fromEntries(entries.map(([name, parameter]) => {
      const limit = bound && "minimum" in parameter && parameter.enum === undefined ? parameter[bound] : undefined;
      return [name, limit ?? sample(parameter)];
    }));
  const sets = [at(), at("minimum"), at("maximum")];
  return sets.filter((set, index) => sets.findIndex((other) => JSON.stringify(other) === JSON.stringify(set)) === index);
}

function sample(parameter: PresetParameter): ParameterValue {
  const first = parameter.default ?? parameter.examples?.[0] ?? ("enum" in parameter ? parameter.enum?.[0] : undefined);
  if (first !== undefined) return first;
  if (parameter.type === "boolean") return false;
  if (parameter.type === "string") return "";
  return parameter.minimum ?? parameter.maximum ?? 0;
}
