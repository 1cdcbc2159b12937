import type { Destination } from "../../shared/schemas/destinations";

/** A row of the `destinations` table; `credentials` is sealed (./credentials.ts). */
export interface DestinationRow {
  id: string;
  user_id: string;
  name: string;
  type: "s3";
  endpoint: string | null;
  region: string;
  bucket: string;
  prefix: string;
  path_style: number;
  credentials: string;
  fingerprint: string;
  created_at: string;
  updated_at: string;
}

/**
 * Inserts a destination unless the user already has `limit` of them (`full`) or one by that
 * name (`taken`): one statement, so two concurrent requests cannot both pass the count.
 */
export async function insertDestination(db: D1Database, row: DestinationRow, limit: number): Promise<"inserted" | "taken" | "full"> {
  const inserted = await db
    .prepare(
      `INSERT INTO destinations (id, user_id, name, type, endpoint, region, bucket, prefix, path_style, credentials, fingerprint, created_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13
       WHERE (SELECT COUNT(*) FROM destinations WHERE user_id = ?2) < ?14 ON CONFLICT (user_id, name) DO NOTHING`,
    )
    .bind(row.id, row.user_id, row.name, row.type, row.endpoint, row.region, row.bucket, row.prefix, row.path_style, row.credentials, row.fingerprint, row.created_at, row.updated_at, limit)
    .run();
  if (inserted.meta.changes === 1) return "inserted";
  return (await db.prepare("SELECT 1 FROM destinations WHERE user_id = ? AND name = ?").bind(row.user_id, row.name).first()) ? "taken" : "full";
}

/** A destination of this user by id or by name, or null: another user's is indistinguishable from a missing one. */
export async function findDestination(db: D1Database, userId: string, idOrName: string): Promise<DestinationRow | null> {
  return db.prepare("SELECT * FROM destinations WHERE user_id = ? AND (id = ? OR name = ?)").bind(userId, idOrName, idOrName).first<DestinationRow>();
}

/** A page of the user's destinations, by name, and how many they have. */
export async function listDestinations(db: D1Database, userId: string, page: { limit: number; offset: number }): Promise<{ total: number; rows: DestinationRow[] }> {
  const [count, rows] = await db.batch([
    db.prepare("SELECT COUNT(*) AS total FROM destinations WHERE user_id = ?").bind(userId),
    db.prepare("SELECT * FROM destinations WHERE user_id = ? ORDER BY name LIMIT ? OFFSET ?").bind(userId, page.limit, page.offset),
  ]);
  return { total: (count!.results[0] as { total: number }).total, rows: rows!.results as DestinationRow[] };
}

/** Replaces every changeable column of a destination; false when the new name is already another destination's. */
export async function replaceDestination(db: D1Database, row: DestinationRow): Promise<boolean> {
  const clash = await db.prepare("SELECT 1 FROM destinations WHERE user_id = ? AND name = ? AND id != ?").bind(row.user_id, row.name, row.id).first();
  if (clash) return false;
  await db
    .prepare("UPDATE destinations SET name = ?, endpoint = ?, region = ?, bucket = ?, prefix = ?, path_style = ?, credentials = ?, fingerprint = ?, updated_at = ? WHERE id = ? AND user_id = ?")
    .bind(row.name, row.endpoint, row.region, row.bucket, row.prefix, row.path_style, row.credentials, row.fingerprint, row.updated_at, row.id, row.user_id)
    .run();
  return true;
}

/** Deletes one destination of the user; false when there was none. */
export async function deleteDestination(db: D1Database, userId: string, id: string): Promise<boolean> {
  const deleted = await db.prepare("DELETE FROM destinations WHERE id = ? AND user_id = ?").bind(id, userId).run();
  return deleted.meta.changes === 1;
}

/** Every destination of the user (erasing the account); a statement, for batches. */
export function deleteUserDestinationsStatement(db: D1Database, userId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM destinations WHERE user_id = ?").bind(userId);
}

/** The API's view: never the credentials, only their fingerprint. */
export function presentDestination(row: DestinationRow): Destination {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    endpoint: row.endpoint,
    region: row.region,
    bucket: row.bucket,
    prefix: row.prefix,
    path_style: row.path_style === 1,
    credentials_fingerprint: row.fingerprint,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}
