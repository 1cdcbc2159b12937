import { InvalidArgumentError } from "commander";
import type { PresetParameters } from "../../sdk/src/index";

/** Commander's collector for a repeatable `--param name=value`. */
export function collectParam(value: string, previous: [string, string][] = []): [string, string][] {
  const at = value.indexOf("=");
  if (at < 1) throw new InvalidArgumentError(`expected name=value, got ${JSON.stringify(value)}`);
  return [...previous, [value.slice(0, at), value.slice(at + 1)]];
}

const NUMERIC = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * The values as the preset's schema types them: `--param width=320` reaches the API as the
 * integer 320 when `width` is an integer or number, `true`/`false` as booleans. Anything that
 * does not read as its type (or a name the preset does not have) goes as text, for the service
 * to refuse with PRESET_PARAMS_INVALID naming the parameter.
 */
export function typedParams(pairs: [string, string][], schema: PresetParameters): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [name, text] of pairs) {
    const type = Object.hasOwn(schema.properties, name) ? schema.properties[name]!.type : undefined;
    if ((type === "integer" || type === "number") && NUMERIC.test(text.trim())) params[name] = Number(text);
    else if (type === "boolean" && (text === "true" || text === "false")) params[name] = text === "true";
    else params[name] = text;
  }
  return params;
}
