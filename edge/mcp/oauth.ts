import { OAuthAuthorizationServer } from "@cloudflare/workers-oauth-provider";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { isWellFormedApiKey } from "../../shared/api-keys";
import { bearerToken } from "../../shared/bearer";
import { AppError } from "../../shared/errors";
import { requireApiKey, unauthorized } from "../accounts/credentials";
import { userExists } from "../accounts/users";
import { createApp, type AppEnv } from "../lib/openapi";
import { enforceRateLimit } from "../lib/rate-limit";

/** The consent page: under /console, so the console's sign-in page may send the browser back to it. */
export const AUTHORIZE_PATH = "/console/oauth/authorize";
const TOKEN_PATH = "/oauth/token";
const REGISTER_PATH = "/oauth/register";
const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";

/** What a grant carries to the MCP server: the user who allowed it (edge/mcp/consent.tsx). */
export interface GrantProps {
  userId: string;
}

/** The protected resource is the whole API origin; /mcp is the one route that takes its tokens. */
const resourceOf = (origin: string) => `${origin}/`;

const servers = new Map<string, OAuthAuthorizationServer<Env> | null>();

/**
 * The authorization server of the origin a request came to. Issuer and resource are fixed when the
 * server is built, and the origin is only known per request: in production it is always EDGE_URL's
 * (requireRouteHost refuses other hosts), locally whatever host the stack was reached on. The
 * library refuses plain http except on a loopback host; such an origin has no OAuth (null).
 * https://modelcontextprotocol.io/specification/2025-06-18/basic/authorization
 */
function authorizationServer(origin: string): OAuthAuthorizationServer<Env> | null {
  if (!servers.has(origin)) {
    let server: OAuthAuthorizationServer<Env> | null = null;
    try {
      server = new OAuthAuthorizationServer<Env>({
        issuer: origin,
        resources: [resourceOf(origin)],
        authorizeEndpoint: `${origin}${AUTHORIZE_PATH}`,
        tokenEndpoint: `${origin}${TOKEN_PATH}`,
        clientRegistrationEndpoint: `${origin}${REGISTER_PATH}`,
      });
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
    }
    servers.set(origin, server);
  }
  return servers.get(origin)!;
}

export function requireAuthorizationServer(origin: string): OAuthAuthorizationServer<Env> {
  const server = authorizationServer(origin);
  if (!server) throw new AppError("NOT_FOUND", `OAuth needs https (or http on a loopback host); ${origin} is neither. Use an API key.`);
  return server;
}

/** Requests on /mcp authenticated by an OAuth access token, mapped to the token's user. */
const oauthCallers = new WeakMap<Request, string>();

/** The user an OAuth access token authenticated this /mcp request as; undefined for an API key. */
export function oauthUserOf(request: Request): string | undefined {
  return oauthCallers.get(request);
}

/**
 * /mcp takes an API key, exactly as the REST API does, or an OAuth access token this Worker issued.
 * A 401 names the protected resource metadata (RFC 9728 section 5.1), which is how a remote
 * connector finds out it can sign in instead of asking for a key.
 * https://modelcontextprotocol.io/specification/2025-06-18/basic/authorization#authorization-server-location
 */
export const requireMcpCaller = createMiddleware<AppEnv>(async (c, next) => {
  const origin = new URL(c.req.url).origin;
  const challenge = `Bearer resource_metadata="${origin}${RESOURCE_METADATA_PATH}"`;
  const token = bearerToken(c.req.header("authorization"));
  if (token && !isWellFormedApiKey(token)) {
    // A token the provider cannot validate grants nothing: 401 below.
    const granted = await authorizationServer(origin)?.validateToken<GrantProps>(resourceOf(origin), token, c.env).catch(() => null);
    const userId = granted?.props.userId;
    // A token outlives nothing it was granted by: an erased account's tokens stop at once.
    if (!userId || !(await userExists(c.env.DB, userId))) throw unauthorized().withHeaders({ "www-authenticate": `${challenge}, error="invalid_token"` });
    oauthCallers.set(c.req.raw, userId);
    c.set("userId", userId);
    for (const [name, value] of Object.entries(await enforceRateLimit(c.env, `user:${userId}`))) c.header(name, value);
    return next();
  }
  let authenticated = false;
  try {
    await requireApiKey(c, async () => {
      authenticated = true;
      await next();
    });
  } catch (error) {
    if (!authenticated && error instanceof AppError && error.code === "UNAUTHORIZED") throw error.withHeaders({ "www-authenticate": challenge });
    throw error;
  }
});

/**
 * OAuth's discovery documents, dynamic client registration (RFC 7591) and the token endpoint, all
 * answered by @cloudflare/workers-oauth-provider; the consent page is edge/mcp/consent.tsx.
 * Registrations, grants and tokens live in OAUTH_KV, tokens only as hashes.
 */
export function oauthEndpoints() {
  const app = createApp();
  app.get(RESOURCE_METADATA_PATH, (c) => {
    const origin = new URL(c.req.url).origin;
    requireAuthorizationServer(origin);
    return c.json(
      { resource: resourceOf(origin), authorization_servers: [origin], bearer_methods_supported: ["header"], resource_name: "ffedge" },
      200,
      { "access-control-allow-origin": "*", "cache-control": "public, max-age=3600" },
    );
  });
  const served = (c: Context<AppEnv>) => requireAuthorizationServer(new URL(c.req.url).origin).fetch(c.req.raw, c.env, c.executionCtx as ExecutionContext);
  app.on(["GET", "OPTIONS"], "/.well-known/oauth-authorization-server", (c) => served(c));
  app.on(["POST", "OPTIONS"], [TOKEN_PATH, REGISTER_PATH], (c) => served(c));
  return app;
}
