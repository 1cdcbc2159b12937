import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { actAsOAuthUser } from "../accounts/credentials";

export type Forward = (request: Request, env: Env, ctx: ExecutionContext) => Response | Promise<Response>;

/** What a tool needs to act for its caller: the app itself, and the caller's own credentials. */
export interface Caller {
  forward: Forward;
  env: Env;
  ctx: ExecutionContext;
  origin: string;
  authorization: string;
  /** Set when an OAuth access token authenticated the caller: each call acts as this user. */
  oauthUserId?: string;
  /** Aborts when the MCP client disconnects, so a wait stops with it. */
  signal: AbortSignal;
}

/** A problem the REST API answered, as the tool reports it. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

/**
 * Calls the public REST API in-process with the caller's Authorization header, so each tool runs
 * the very routes an HTTP client would: the same validation, command policy, quotas, rate limit
 * and per-user isolation. Answers other than 2xx throw an ApiProblem.
 */
export async function callApi(caller: Caller, method: string, path: string, body?: unknown, extraHeaders?: Record<string, string>): Promise<Response> {
  const headers = new Headers({ ...extraHeaders, authorization: caller.authorization });
  const json = body === undefined ? undefined : JSON.stringify(body);
  if (json !== undefined) {
    headers.set("content-type", "application/json");
    // With a known length the JSON body limit reads it as it is; without one it wraps the body in
    // a new Request, which would lose the OAuth caller's mark (keyed by this Request object).
    headers.set("content-length", String(new TextEncoder().encode(json).byteLength));
  }
  const request = new Request(new URL(path, caller.origin), { method, headers, body: json, signal: caller.signal });
  if (caller.oauthUserId) actAsOAuthUser(request, caller.oauthUserId);
  const response = await caller.forward(request, caller.env, caller.ctx);
  if (response.ok) return response;
  // A body that is not a problem document still leaves the status, reported below.
  const problem = (await response.json().catch(() => ({}))) as { code?: string; detail?: string };
  throw new ApiProblem(response.status, problem.code ?? "INTERNAL", problem.detail ?? `The API answered ${response.status}.`);
}

export async function callJson<T>(caller: Caller, method: string, path: string, body?: unknown, extraHeaders?: Record<string, string>): Promise<T> {
  return (await callApi(caller, method, path, body, extraHeaders)).json() as Promise<T>;
}

/** A tool's answer: the structured result, and the same in a line or two of text for clients that show only text. */
export function toolResult(structured: Record<string, unknown>, summary: string): CallToolResult {
  return { structuredContent: structured, content: [{ type: "text", text: `${summary}\n\n${JSON.stringify(structured, null, 2)}` }] };
}

/**
 * Runs a tool body and turns an API problem into a tool error (`isError`), the code and detail
 * in its text, so the agent can read why and correct itself. The problem carries no
 * structuredContent: clients check that against the tool's outputSchema even on errors.
 */
export async function asTool(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (error) {
    if (!(error instanceof ApiProblem)) throw error;
    return { isError: true, content: [{ type: "text", text: `${error.code} (HTTP ${error.status}): ${error.detail}` }] };
  }
}
