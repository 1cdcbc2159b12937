import { publicUrls } from "./records";

/**
 * How long a data center keeps a file in its edge cache: never past the file's expiry, and
 * at most this long, because `cache.delete` only reaches the data center it runs in — a
 * deleted file stays downloadable from other data centers' caches for at most this long.
 * https://developers.cloudflare.com/workers/runtime-apis/cache/
 */
export const EDGE_CACHE_SECONDS = 600;

/** The largest object the Cache API stores (`cache.put` of more is refused); larger files are always read from R2. */
export const MAX_CACHED_BYTES = 512 * 1024 * 1024;

/**
 * The one cache entry of a stored object: its public URL, derived from the object key the CDN
 * route resolved and never from the request. Every URL that names the object (`%2E` for `.`,
 * `%2F` for `/`, another Host, the China domain) reads and fills this entry, so purging it
 * removes the object from this data center's cache whichever URL cached it.
 */
export function cacheKeyFor(env: Env, key: string): Request {
  return new Request(publicUrls(env, key).url, { method: "GET" });
}

/**
 * Drops stored objects from the edge cache of this data center (see EDGE_CACHE_SECONDS for
 * the others). Every operation that deletes objects the CDN serves before their expiry, or
 * sweeps them at it, calls this with the keys it deleted.
 */
export async function purgeCached(env: Env, keys: Iterable<string>): Promise<void> {
  await Promise.all([...keys].map((key) => caches.default.delete(cacheKeyFor(env, key))));
}
