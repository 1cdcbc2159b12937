import { type Schema, Validator } from "@cfworker/json-schema";
import { AppError } from "../../shared/errors";
import type { PresetParameter, PresetParameters } from "../../shared/schemas/presets";
import type { ParameterValue } from "./template";

/**
 * Why `value` does not fit `parameter` ("must be ≤ 51"), or undefined when it does. The JSON
 * Schema validator decides; the words are ours, so that a refusal names the bound it broke.
 */
export function valueProblem(parameter: PresetParameter, value: unknown): string | undefined {
  const result = new Validator(parameter as Schema, "2020-12", true).validate(value);
  if (result.valid) return undefined;
  const keyword = result.errors.find((error) => error.keyword !== "properties")?.keyword ?? result.errors[0]?.keyword;
  return describe(parameter, keyword);
}

function describe(parameter: PresetParameter, keyword: string | undefined): string {
  const p = parameter as Record<string, unknown>;
  switch (keyword) {
    case "type":
      return `must be ${parameter.type === "integer" ? "an integer" : `a ${parameter.type}`}`;
    case "minimum":
      return `must be ≥ ${p.minimum}`;
    case "maximum":
      return `must be ≤ ${p.maximum}`;
    case "enum":
      return `must be one of ${(p.enum as unknown[]).map((value) => JSON.stringify(value)).join(", ")}`;
    case "minLength":
      return `must be at least ${p.minLength} characters long`;
    case "maxLength":
      return `must be at most ${p.maxLength} characters long`;
    case "pattern":
      return `must match the pattern ${p.pattern}`;
    default:
      return "does not fit the parameter's schema";
  }
}

/**
 * The values a task's `params` give a preset's parameters, defaults filled in, or
 * PRESET_PARAMS_INVALID naming the first parameter at fault (`params.crf: must be ≤ 51`).
 */
export function parameterValues(presetName: string, parameters: PresetParameters, params: Readonly<Record<string, unknown>>): Record<string, ParameterValue> {
  const declared = Object.keys(parameters.properties);
  const refuse = (name: string, why: string) => new AppError("PRESET_PARAMS_INVALID", `params.${name}: ${why}.`, { param: name, preset: presetName });
  const stranger = Object.keys(params).find((name) => !declared.includes(name));
  if (stranger !== undefined) throw refuse(stranger, `is not a parameter of the preset '${presetName}' (${declared.length > 0 ? `its parameters: ${declared.join(", ")}` : "it takes none"})`);
  const required = parameters.required ?? [];
  const values: Record<string, ParameterValue> = {};
  for (const [name, parameter] of Object.entries(parameters.properties)) {
    const value = Object.hasOwn(params, name) ? params[name] : required.includes(name) ? undefined : parameter.default;
    if (value === undefined) throw refuse(name, "is required");
    const problem = valueProblem(parameter, value);
    if (problem) throw refuse(name, problem);
    values[name] = value as ParameterValue;
  }
  return values;
}
