import { AppError } from "../../shared/errors";
import { log } from "../lib/log";
import { openCredentials, targetOf } from "./manage";
import { type DestinationRow, findDestination } from "./repository";
import { type S3Body, putObject } from "./s3";

/**
 * One delivery may take this long, body included: a 1 GiB output at ~2 MB/s. It runs in a task
 * object's alarm, which may run for 15 minutes
 * (https://developers.cloudflare.com/durable-objects/api/alarms/).
 */
export const DELIVERY_TIMEOUT_MS = 10 * 60_000;

/** The destination a task named, or DESTINATION_NOT_FOUND (deleted since, or never the user's). */
export async function destinationOfUser(db: D1Database, userId: string, idOrName: string): Promise<DestinationRow> {
  const row = await findDestination(db, userId, idOrName);
  if (!row) throw new AppError("DESTINATION_NOT_FOUND", `There is no destination '${idOrName}'; list yours with GET /v1/destinations.`, { destination: idOrName });
  return row;
}

/** Where an output of a task goes in the destination's bucket: `<prefix><task_id>/<filename>`. */
export function deliveryKey(row: Pick<DestinationRow, "prefix">, taskId: string, filename: string): string {
  return `${row.prefix}${taskId}/${filename}`;
}

/** Streams `body` to `key` of the user's destination; returns the object's URL. */
export async function deliverObject(env: Env, userId: string, destinationId: string, key: string, body: S3Body): Promise<string> {
  const row = await destinationOfUser(env.DB, userId, destinationId);
  const credentials = await openCredentials(env, row).catch((error: unknown) => {
    log.warn("destination credentials do not open", { destination_id: row.id, error });
    throw new AppError("DESTINATION_CREDENTIALS", `The stored credentials of destination '${row.name}' can no longer be read (the service's signing secret changed); save them again with PATCH /v1/destinations/${row.id}.`);
  });
  return putObject(env, targetOf(row), credentials, key, body, DELIVERY_TIMEOUT_MS);
}
