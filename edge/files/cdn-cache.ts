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

/** The cache entry of a CDN URL: the URL without query or fragment, as a GET. */
export function cacheKeyFor(url: string | URL): Request {
  const target = new URL(url);
  return new Request(`${target.origin}${target.pathname}`, { method: "GET" });
}

/**
 * Drops stored objects from the edge cache of this data center (see EDGE_CACHE_SECONDS for
 * the others), under both public URLs (global and China). Call it whenever objects that the
 * CDN serves are deleted before their expiry.
 */
export async function purgeCached(env: Env, keys: Iterable<string>): Promise<void> {
  const urls = [...keys].flatMap((key) => Object.values(publicUrls(env, key)));
  await Promise.all(urls.map((url) => caches.default.delete(cacheKeyFor(url))));
}
