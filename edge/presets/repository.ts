import { AppError } from "../../shared/errors";
import type { Preset, PresetDefinition } from "../../shared/schemas/presets";

/** The `presets` table's owner: each user's saved presets (the built-in ones are in code). */

interface PresetRow {
  id: string;
  user_id: string;
  name: string;
  description: string | null;
  command: string;
  parameters: string;
  /** JSON {id, mode}: the destination its tasks deliver to; null: none. */
  destination: string | null;
  created_at: string;
  updated_at: string;
}

/** Presets one user may keep. */
export const MAX_PRESETS_PER_USER = 200;

export function toPreset(row: PresetRow): Preset {
  return {
    id: row.id, name: row.name, description: row.description, command: row.command,
    parameters: JSON.parse(row.parameters) as Preset["parameters"],
    destination: row.destination === null ? null : (JSON.parse(row.destination) as Preset["destination"]), builtin: false, created_at: row.created_at, updated_at: row.updated_at,
  };
}

/** The user's preset with this id or name. */
export async function findPreset(db: D1Database, userId: string, idOrName: string): Promise<Preset | null> {
  const row = await db.prepare("SELECT * FROM presets WHERE user_id = ?1 AND (id = ?2 OR name = ?2)").bind(userId, idOrName).first<PresetRow>();
  return row ? toPreset(row) : null;
}

export async function listPresets(db: D1Database, userId: string, page: { limit: number; offset: number }): Promise<{ total: number; presets: Preset[] }> {
  const [count, rows] = await db.batch([
    db.prepare("SELECT COUNT(*) AS total FROM presets WHERE user_id = ?").bind(userId),
    db.prepare("SELECT * FROM presets WHERE user_id = ? ORDER BY name LIMIT ? OFFSET ?").bind(userId, page.limit, page.offset),
  ]);
  return { total: (count!.results[0] as { total: number }).total, presets: (rows!.results as PresetRow[]).map(toPreset) };
}

/**
 * Records a new preset while the user has fewer than MAX_PRESETS_PER_USER (one statement, so
 * two concurrent saves cannot pass the cap together). PRESET_NAME_TAKEN if the name is the
 * user's already; PRESET_LIMIT_REACHED at the cap.
 */
export async function insertPreset(db: D1Database, userId: string, definition: PresetDefinition, id: string, now: string): Promise<Preset> {
  const row = await uniqueName(definition.name, () =>
    db
      .prepare(
        `INSERT INTO presets (id, user_id, name, description, command, parameters, created_at, updated_at, destination)
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?9 WHERE (SELECT COUNT(*) FROM presets WHERE user_id = ?2) < ?8
         RETURNING *`,
      )
      .bind(id, userId, definition.name, definition.description ?? null, definition.command, JSON.stringify(definition.parameters), now, MAX_PRESETS_PER_USER, destinationColumn(definition))
      .first<PresetRow>(),
  );
  if (!row) throw new AppError("PRESET_LIMIT_REACHED", `You have ${MAX_PRESETS_PER_USER} presets, the most one user may keep; delete one first.`, { limit: MAX_PRESETS_PER_USER });
  return toPreset(row);
}

/** Replaces the user's preset `id` with `definition`; null if it is gone. */
export async function replacePreset(db: D1Database, userId: string, id: string, definition: PresetDefinition, now: string): Promise<Preset | null> {
  const row = await uniqueName(definition.name, () =>
    db
      .prepare("UPDATE presets SET name = ?3, description = ?4, command = ?5, parameters = ?6, updated_at = ?7, destination = ?8 WHERE user_id = ?1 AND id = ?2 RETURNING *")
      .bind(userId, id, definition.name, definition.description ?? null, definition.command, JSON.stringify(definition.parameters), now, destinationColumn(definition))
      .first<PresetRow>(),
  );
  return row ? toPreset(row) : null;
}

/** The names of the user's presets that name this destination (by its id), by name. */
export async function presetsNamingDestination(db: D1Database, userId: string, destinationId: string): Promise<string[]> {
  const { results } = await db
    .prepare("SELECT name FROM presets WHERE user_id = ? AND json_extract(destination, '$.id') = ? ORDER BY name")
    .bind(userId, destinationId)
    .all<{ name: string }>();
  return results.map((row) => row.name);
}

function destinationColumn(definition: PresetDefinition): string | null {
  return definition.destination ? JSON.stringify({ id: definition.destination.id, mode: definition.destination.mode }) : null;
}

export async function deletePreset(db: D1Database, userId: string, id: string): Promise<boolean> {
  const result = await db.prepare("DELETE FROM presets WHERE user_id = ? AND id = ?").bind(userId, id).run();
  return result.meta.changes > 0;
}

async function uniqueName<T>(name: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof Error && /UNIQUE constraint failed/.test(error.message)) throw nameTaken(name);
    throw error;
  }
}

export function nameTaken(name: string, detail = `You already have a preset named '${name}'; choose another name or change that one (PATCH /v1/presets/${name}).`): AppError {
  return new AppError("PRESET_NAME_TAKEN", detail, { name });
}
