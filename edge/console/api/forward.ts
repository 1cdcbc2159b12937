import type { Context } from "hono";
import { AppError } from "../../../shared/errors";
import { actAsSessionUser } from "../../accounts/credentials";
import { requireSession } from "./guards";
import { type AppEnv, createApp } from "../../lib/openapi";

export type Forward = (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>;

const CONSOLE = "/console/api";

/** `/console/api/v1/…` → `/v1/…`; `/console/api/upload/…` and `/console/api/files…` → `/api/…`. */
export function publicPathFor(path: string): string | undefined {
  const rest = path.slice(CONSOLE.length);
  if (rest.startsWith("/v1/")) return rest;
  if (rest.startsWith("/upload/") || rest === "/files" || rest.startsWith("/files/")) return `/api${rest}`;
  return undefined;
}

/** The reverse, for Location headers (tus): the client keeps using the session. */
function consoleLocationFor(location: string, origin: string): string | undefined {
  const url = new URL(location, origin);
  if (url.origin !== origin) return undefined;
  if (url.pathname.startsWith("/v1/")) return `${origin}${CONSOLE}${url.pathname}${url.search}`;
  if (url.pathname.startsWith("/api/")) return `${origin}${CONSOLE}${url.pathname.slice("/api".length)}${url.search}`;
  return undefined;
}

/**
 * The whole public API again under /console/api, with the session (and CSRF) instead of a
 * Bearer key: the request is re-dispatched through the same app, to the same handlers, marked
 * as acting for the session's user. The cookie's Path=/console keeps it away from /v1 and /api
 * themselves, so the public routes never accept a cookie.
 */
export function publicApiForSession(forward: Forward) {
  const app = createApp();
  app.all(`${CONSOLE}/*`, requireSession, async (c: Context<AppEnv>) => {
    const target = publicPathFor(c.req.path);
    if (!target) throw new AppError("NOT_FOUND", `There is no route ${c.req.method} ${c.req.path}.`);
    const url = new URL(c.req.url);
    url.pathname = target;
    const request = new Request(url, c.req.raw);
    actAsSessionUser(request, c.get("session")!);
    const response = await forward(request, c.env, c.executionCtx as ExecutionContext);
    const location = response.headers.get("location");
    const rewritten = location ? consoleLocationFor(location, url.origin) : undefined;
    if (!rewritten) return response;
    const copy = new Response(response.body, response);
    copy.headers.set("location", rewritten);
    return copy;
  });
  return app;
}
