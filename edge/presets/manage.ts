import { randomHex } from "../../shared/encoding";
import { AppError } from "../../shared/errors";
import type { Preset, PresetChanges, PresetDefinition } from "../../shared/schemas/presets";
import { destinationOfUser } from "../destinations/deliver";
import { config } from "../lib/config";
import { BUILTIN_PRESETS, findBuiltinPreset } from "./builtins";
import { checkPresetDefinition } from "./definition";
import { checkedPresetCommand } from "./expand";
import { deletePreset, findPreset, insertPreset, listPresets, nameTaken, replacePreset } from "./repository";

/** A name that reads as a preset id: refused as a name, so an id or a name never means two presets. */
const ID = /^pre_[0-9a-f]{24}$/;

/** The preset `idOrName` as the user sees it: a built-in one (their names are reserved), else one of the user's. */
export async function resolvePreset(env: Env, userId: string, idOrName: string): Promise<Preset> {
  const preset = findBuiltinPreset(idOrName) ?? (await findPreset(env.DB, userId, idOrName));
  if (!preset) throw new AppError("PRESET_NOT_FOUND", `There is no preset '${idOrName}': GET /v1/presets lists the built-in ones and yours.`, { preset: idOrName });
  return preset;
}

/** What a task of this preset with these params would run, judged as POST /v1/tasks judges it, without running it. */
export async function expandForUser(env: Env, userId: string, idOrName: string, params: Record<string, unknown>): Promise<{ command: string; inputs: string[]; outputs: string[] }> {
  const { command, parsed } = checkedPresetCommand(await resolvePreset(env, userId, idOrName), params, { allowHosts: config(env).devFetchAllowHosts });
  return { command, inputs: parsed.inputs.map((input) => input.url), outputs: parsed.outputs.map((output) => output.filename) };
}

/**
 * Saves a new preset for the user once it passes checkPresetDefinition (PRESET_INVALID
 * otherwise) and the destination it names is one of the user's (DESTINATION_NOT_FOUND).
 */
export async function createPreset(env: Env, userId: string, input: unknown, now = new Date()): Promise<Preset> {
  const definition = await withOwnDestination(env, userId, checkedDefinition(env, input));
  return insertPreset(env.DB, userId, definition, `pre_${randomHex(12)}`, now.toISOString());
}

/** Changes the fields given in `changes` of the user's preset; the result is checked as a whole. Built-in presets are read-only. */
export async function updatePreset(env: Env, userId: string, idOrName: string, changes: PresetChanges, now = new Date()): Promise<Preset> {
  const current = await ownPreset(env, userId, idOrName);
  const { destination, ...fields } = changes;
  const kept = destination === undefined ? current.destination : destination;
  const definition = await withOwnDestination(env, userId, checkedDefinition(env, {
    name: current.name, description: current.description ?? undefined, command: current.command, parameters: current.parameters,
    ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)),
    ...(kept ? { destination: kept } : {}),
  }));
  const updated = await replacePreset(env.DB, userId, current.id, definition, now.toISOString());
  if (!updated) throw notFound(idOrName);
  return updated;
}

export async function removePreset(env: Env, userId: string, idOrName: string): Promise<void> {
  const current = await ownPreset(env, userId, idOrName);
  if (!(await deletePreset(env.DB, userId, current.id))) throw notFound(idOrName);
}

/** One page of the built-in presets followed by the user's, each group by name. */
export async function presetsOf(env: Env, userId: string, query: { builtin?: boolean; limit: number; offset: number }): Promise<{ total: number; presets: Preset[] }> {
  const builtins = query.builtin === false ? [] : BUILTIN_PRESETS;
  const shown = builtins.slice(query.offset, query.offset + query.limit);
  if (query.builtin === true) return { total: builtins.length, presets: shown };
  const own = await listPresets(env.DB, userId, { limit: query.limit - shown.length, offset: Math.max(0, query.offset - builtins.length) });
  return { total: builtins.length + own.total, presets: [...shown, ...own.presets] };
}

/** The definition with its destination resolved to the id of one of the user's destinations, a rename later not redirecting it. */
async function withOwnDestination(env: Env, userId: string, definition: PresetDefinition): Promise<PresetDefinition> {
  if (!definition.destination) return definition;
  const row = await destinationOfUser(env.DB, userId, definition.destination.id);
  return { ...definition, destination: { id: row.id, mode: definition.destination.mode } };
}

function checkedDefinition(env: Env, input: unknown): PresetDefinition {
  const definition = checkPresetDefinition(input, { allowHosts: config(env).devFetchAllowHosts });
  if (findBuiltinPreset(definition.name)) throw nameTaken(definition.name, `'${definition.name}' is the name of a built-in preset; choose another name.`);
  if (ID.test(definition.name)) throw new AppError("PRESET_INVALID", `The name '${definition.name}' reads as a preset id; choose another name.`, { field: "name" });
  return definition;
}

async function ownPreset(env: Env, userId: string, idOrName: string): Promise<Preset> {
  if (findBuiltinPreset(idOrName)) {
    throw new AppError("PRESET_READ_ONLY", `'${idOrName}' is a built-in preset and cannot be changed or deleted; save a copy under another name (POST /v1/presets) and change that.`, { preset: idOrName });
  }
  const preset = await findPreset(env.DB, userId, idOrName);
  if (!preset) throw notFound(idOrName);
  return preset;
}

function notFound(idOrName: string): AppError {
  return new AppError("PRESET_NOT_FOUND", `You have no preset '${idOrName}'.`, { preset: idOrName });
}
