import type { MiddlewareHandler } from "hono";
import { AppError } from "../../shared/errors";
import { config } from "./config";

/** The CDN's route group (edge/routes/cdn.ts); every other path is the API's (/v1, /api, /openapi.json, /docs, /console, /internal). */
const CDN_PATH = /^\/(uploads|outputs)\//;

/** Which route group a request path belongs to, judged on the path the router matches (Hono decodes `%75ploads` to `uploads`). */
export function routeGroup(path: string): "api" | "cdn" {
  return CDN_PATH.test(path) ? "cdn" : "api";
}

/**
 * In production each route group answers only on its own hostname: the API, the console and the
 * transcoders' callbacks on EDGE_URL's, the files on PUBLIC_URL's and CN_PUBLIC_URL's, and
 * nothing on any other (a `*.workers.dev` address included). User content then never shares an
 * origin with the console's cookies, and neither host can be used as the other (docs/deploy.md
 * section 5). A request on the wrong host gets NOT_FOUND, as for a path that does not exist.
 * The local stack (ENVIRONMENT other than "production") serves everything on every host.
 * Containers' callbacks never pass here: their outbound handler answers them with the internal
 * routes alone (edge/dispatch/transcoder-container.ts).
 */
export const requireRouteHost: MiddlewareHandler<{ Bindings: Env }> = async (c, next) => {
  const settings = config(c.env);
  if (!settings.production) return next();
  const host = new URL(c.req.url).hostname;
  const group = routeGroup(c.req.path);
  const apiHost = hostnameOf(settings.edgeUrl);
  const cdnHosts = [hostnameOf(settings.publicUrl), hostnameOf(settings.cnPublicUrl)];
  if (group === "cdn" ? cdnHosts.includes(host) : host === apiHost) return next();
  const where = group === "cdn" ? `files are served on ${settings.publicUrl}` : `the API is at ${settings.edgeUrl}`;
  throw new AppError("NOT_FOUND", `There is no route ${c.req.method} ${c.req.path} on ${host}; ${where}.`);
};

function hostnameOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}
