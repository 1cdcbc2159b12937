/**
 * A preset's parameters (the JSON Schema subset of shared/schemas/presets.ts) as form fields, and
 * the form's values back as the `params` of POST /v1/tasks; pure, no DOM.
 */
import type { PresetParameter, PresetParameters } from "../../../shared/schemas/presets";

export interface FormField {
  name: string;
  label: string;
  description?: string;
  /** number: an <input type=number>; select: an enum; checkbox: a boolean; text: any other string. */
  control: "number" | "select" | "checkbox" | "text";
  /** The parameter's JSON type, which the form's text is turned back into. */
  type: PresetParameter["type"];
  required: boolean;
  /** The value the field starts with, as the form writes it ("" for none). */
  initial: string;
  /** number fields: min, max and step attributes. */
  min?: number;
  max?: number;
  step?: string;
  /** select fields: the choices, as written in the form. */
  options?: string[];
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  /** A string the command may read as an input (its examples or default are URLs): offer the user's files. */
  fileInput: boolean;
  /** A value to show as a placeholder, from `examples`. */
  example?: string;
}

const URL_LIKE = /^https?:\/\//i;

/** The form fields of a preset's parameters, in the schema's order, required ones marked. */
export function formFields(parameters: PresetParameters): FormField[] {
  const required = new Set(parameters.required ?? []);
  return Object.entries(parameters.properties).map(([name, parameter]) => fieldOf(name, parameter, required.has(name)));
}

function fieldOf(name: string, parameter: PresetParameter, required: boolean): FormField {
  const base = {
    name,
    label: parameter.title || name,
    description: parameter.description,
    type: parameter.type,
    required,
    initial: parameter.default === undefined ? "" : String(parameter.default),
    fileInput: false,
    example: parameter.type !== "boolean" && parameter.examples ? String(parameter.examples[0]) : undefined,
  };
  if (parameter.type === "boolean") return { ...base, control: "checkbox", example: undefined };
  if (parameter.enum) return { ...base, control: "select", options: parameter.enum.map(String) };
  if (parameter.type === "integer" || parameter.type === "number") {
    return { ...base, control: "number", min: parameter.minimum, max: parameter.maximum, step: parameter.type === "integer" ? "1" : "any" };
  }
  const samples = [parameter.default, ...(parameter.examples ?? [])].filter((value): value is string => typeof value === "string");
  return {
    ...base,
    control: "text",
    minLength: parameter.minLength,
    maxLength: parameter.maxLength,
    pattern: parameter.pattern,
    fileInput: samples.some((value) => URL_LIKE.test(value)) || /^(input|video|audio|image|subtitles|source|file|url)\d*$/i.test(name),
  };
}

/**
 * The form's values as `params`: numbers as numbers, booleans as booleans. A field left empty is
 * left out (the preset's default applies, or the API names the missing parameter); text that is
 * not a number is sent as it is, for the API to refuse with the parameter named.
 */
export function paramsOf(fields: readonly FormField[], read: (name: string) => string | boolean): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const field of fields) {
    const value = read(field.name);
    if (field.type === "boolean") {
      params[field.name] = value === true || value === "true";
      continue;
    }
    const text = String(value).trim();
    if (text === "") continue;
    if (field.type === "integer" || field.type === "number") {
      const number = Number(text);
      params[field.name] = Number.isFinite(number) ? number : text;
    } else params[field.name] = text;
  }
  return params;
}

type PresetFormField = "name" | "description" | "command" | "parameters";

/**
 * The form field a refused save is about: PRESET_INVALID's `field` ("parameters.properties.crf" →
 * parameters), an unknown placeholder or a policy refusal → the command, a taken name → the name.
 */
export function presetFieldOf(problem: { code?: string; field?: unknown; placeholder?: unknown; policy_code?: unknown }): PresetFormField | undefined {
  if (problem.code === "PRESET_NAME_TAKEN") return "name";
  const head = typeof problem.field === "string" ? problem.field.split(".")[0] : undefined;
  if (head === "name" || head === "description" || head === "command" || head === "parameters") return head;
  if (problem.placeholder !== undefined || problem.policy_code !== undefined) return "command";
  return undefined;
}
