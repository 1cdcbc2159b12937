import { randomHex, toHex } from "../../shared/encoding";
import { AppError } from "../../shared/errors";
import { checkFetchUrl } from "../../shared/net/url-policy";
import type { CreateDestination, UpdateDestination } from "../../shared/schemas/destinations";
import { config } from "../lib/config";
import { open, seal } from "../lib/sealed-box";
import { type DestinationRow, deleteDestination, findDestination, insertDestination, replaceDestination } from "./repository";
import { type S3Credentials, type S3Target, deleteObject, putObject } from "./s3";

/** The HKDF label of the destinations' credentials: their own key, not the webhook secrets'. */
const CREDENTIALS_LABEL = "ffedge destination credentials v1";
const PROBE_TIMEOUT_MS = 30_000;
/**
 * As many as webhook endpoints: each destination is a sealed credential and a target of the
 * service's signed outgoing requests, so one account must not multiply them; a handful of
 * buckets (per environment, per customer) is what a user needs.
 */
export const MAX_DESTINATIONS_PER_USER = 20;

/** A destination of this user by id or name, or 404 (another user's is indistinguishable from a missing one). */
export async function requireDestination(db: D1Database, userId: string, idOrName: string): Promise<DestinationRow> {
  const row = await findDestination(db, userId, idOrName);
  if (!row) throw new AppError("NOT_FOUND", `There is no destination '${idOrName}'.`);
  return row;
}

/** Saves a new destination: its endpoint passes the URL policy, its credentials are sealed, its name is the user's only one. */
export async function createDestination(env: Env, userId: string, input: CreateDestination, now = new Date()): Promise<DestinationRow> {
  const endpoint = input.endpoint === undefined ? null : checkEndpoint(env, input.endpoint);
  const id = `dst_${randomHex(12)}`;
  const credentials = { access_key_id: input.access_key_id, secret_access_key: input.secret_access_key };
  const row: DestinationRow = {
    id, user_id: userId, name: input.name, type: "s3", endpoint, region: input.region, bucket: input.bucket, prefix: input.prefix,
    path_style: (input.path_style ?? endpoint !== null) ? 1 : 0,
    credentials: await sealCredentials(env, userId, id, credentials), fingerprint: await fingerprintOf(credentials),
    created_at: now.toISOString(), updated_at: now.toISOString(),
  };
  const outcome = await insertDestination(env.DB, row, MAX_DESTINATIONS_PER_USER);
  if (outcome === "taken") throw nameTaken(input.name);
  if (outcome === "full") throw new AppError("DESTINATION_LIMIT_REACHED", `You have ${MAX_DESTINATIONS_PER_USER} destinations, the most one user may keep; delete one first.`, { limit: MAX_DESTINATIONS_PER_USER });
  return row;
}

/** Changes a destination; new credentials (either half) are sealed again, and a new endpoint is judged again. */
export async function updateDestination(env: Env, userId: string, idOrName: string, change: UpdateDestination, now = new Date()): Promise<DestinationRow> {
  const row = await requireDestination(env.DB, userId, idOrName);
  const endpoint = change.endpoint === undefined ? row.endpoint : change.endpoint === null ? null : checkEndpoint(env, change.endpoint);
  let { credentials, fingerprint } = row;
  if (change.access_key_id !== undefined || change.secret_access_key !== undefined) {
    const current = await openCredentials(env, row);
    const next = { access_key_id: change.access_key_id ?? current.access_key_id, secret_access_key: change.secret_access_key ?? current.secret_access_key };
    credentials = await sealCredentials(env, userId, row.id, next);
    fingerprint = await fingerprintOf(next);
  }
  const next: DestinationRow = {
    ...row, name: change.name ?? row.name, endpoint, region: change.region ?? row.region, bucket: change.bucket ?? row.bucket, prefix: change.prefix ?? row.prefix,
    path_style: change.path_style === undefined ? row.path_style : change.path_style ? 1 : 0,
    credentials, fingerprint, updated_at: now.toISOString(),
  };
  if (!(await replaceDestination(env.DB, next))) throw nameTaken(next.name);
  return next;
}

/**
 * Deletes a destination, unless presets name it (DESTINATION_IN_USE naming them): a preset left
 * naming nothing would send its next tasks' outputs only to our CDN, where the user asked for
 * their bucket. `namedBy` is the presets' own lookup, handed in so that destinations import no
 * other domain. Tasks still delivering to it fail those deliveries DESTINATION_NOT_FOUND.
 */
export async function removeDestination(env: Env, userId: string, idOrName: string, namedBy: (destinationId: string) => Promise<string[]>): Promise<void> {
  const row = await requireDestination(env.DB, userId, idOrName);
  const presets = await namedBy(row.id);
  if (presets.length) {
    throw new AppError(
      "DESTINATION_IN_USE",
      `Destination '${row.name}' is named by your presets ${presets.map((name) => `'${name}'`).join(", ")}; change them first (PATCH /v1/presets/{preset} with "destination": null or another destination).`,
      { presets },
    );
  }
  await deleteDestination(env.DB, userId, row.id);
}

/**
 * Writes a small probe object under the destination's prefix and deletes it again: the same
 * signed requests a delivery makes, so a wrong key, a missing bucket or a host that cannot be
 * reached shows here (DESTINATION_CREDENTIALS, DESTINATION_REFUSED naming S3's code,
 * DESTINATION_UNREACHABLE) rather than on a task's outputs.
 */
export async function testDestination(env: Env, userId: string, idOrName: string): Promise<{ ok: true; key: string }> {
  const row = await requireDestination(env.DB, userId, idOrName);
  const credentials = await openCredentials(env, row);
  const key = `${row.prefix}.ffedge-probe-${randomHex(8)}`;
  const body = "ffedge destination probe; safe to delete\n";
  try {
    await putObject(env, targetOf(row), credentials, key, { stream: body, length: body.length, contentType: "text/plain" }, PROBE_TIMEOUT_MS);
    await deleteObject(env, targetOf(row), credentials, key, PROBE_TIMEOUT_MS);
  } catch (error) {
    if (error instanceof AppError) throw new AppError(error.code, `Destination '${row.name}': ${error.detail}`, { ...error.extra, destination: row.id }).withHeaders(error.headers);
    throw error;
  }
  return { ok: true, key };
}

export function targetOf(row: DestinationRow): S3Target {
  return { endpoint: row.endpoint, region: row.region, bucket: row.bucket, path_style: row.path_style === 1 };
}

export async function openCredentials(env: Env, row: DestinationRow): Promise<S3Credentials> {
  return JSON.parse(await open(env.SIGNING_SECRET, CREDENTIALS_LABEL, boundTo(row.user_id, row.id), row.credentials)) as S3Credentials;
}

function sealCredentials(env: Env, userId: string, id: string, credentials: S3Credentials): Promise<string> {
  return seal(env.SIGNING_SECRET, CREDENTIALS_LABEL, boundTo(userId, id), JSON.stringify(credentials));
}

function boundTo(userId: string, id: string): string {
  return `${userId}\n${id}`;
}

/** The first 4 characters of the key id and 8 hex digits of the secret's SHA-256: tells key pairs apart, reveals neither. */
async function fingerprintOf(credentials: S3Credentials): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(credentials.secret_access_key));
  return `${credentials.access_key_id.slice(0, 4)}…${toHex(digest).slice(0, 8)}`;
}

/**
 * A custom endpoint is a URL a stranger wrote that the Worker will call with signed requests:
 * it passes the URL policy of task inputs and webhooks (public hosts, default ports; the dev
 * allow-list only outside production), is https as a webhook URL is (plain http only for the
 * dev allow-list's hosts, a local S3 server in tests), and is kept as its origin.
 */
export function checkEndpoint(env: Env, raw: string): string {
  const allowHosts = config(env).devFetchAllowHosts;
  const url = checkFetchUrl(raw, { allowHosts });
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (url.protocol !== "https:" && !allowHosts.includes(host)) throw new AppError("URL_NOT_ALLOWED", `The endpoint '${raw}' must use https.`, { token: raw });
  if ((url.pathname !== "/" && url.pathname !== "") || url.search || url.hash) {
    throw new AppError("URL_NOT_ALLOWED", `The endpoint '${raw}' must be an origin (https://host), without a path, query or fragment.`);
  }
  return url.origin;
}

function nameTaken(name: string): AppError {
  return new AppError("DESTINATION_NAME_TAKEN", `You already have a destination named '${name}'.`, { name });
}
