import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ORIGIN, signedInUser, type ConsoleClient } from "../console-api/client";
import { originUrl } from "../files/fixtures";
import { api, createUser, postJson } from "../helpers";

const REDIRECT_URI = "http://127.0.0.1:33418/callback";
const COMMAND = "ffmpeg -i https://example.com/in.mp4 -t 2 out.mp4";

let nextId = 1;

function mcp(token: string | undefined, method: string, params: Record<string, unknown> = {}): Promise<Response> {
  return api("/mcp", token, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
  });
}

async function rpcResult(token: string, method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const response = await mcp(token, method, params);
  expect(response.status).toBe(200);
  const answers = (await response.text()).split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)));
  const answer = answers.find((message) => "id" in message);
  expect(answer.error).toBeUndefined();
  return answer.result;
}

const base64url = (bytes: ArrayBuffer | Uint8Array) => btoa(String.fromCharCode(...new Uint8Array(bytes))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { verifier, challenge: base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))) };
}

async function registerClient(name = "Test Agent"): Promise<string> {
  const response = await SELF.fetch(`${ORIGIN}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: name, redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"], response_types: ["code"] }),
  });
  expect(response.status).toBe(201);
  return (await response.json<{ client_id: string }>()).client_id;
}

function authorizePath(clientId: string, challenge: string, state = "state-123"): string {
  const query = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT_URI, code_challenge: challenge, code_challenge_method: "S256", state, resource: `${ORIGIN}/` });
  return `/console/oauth/authorize?${query}`;
}

/** What a browser does on the consent page: keeps the page's binding cookie and posts the form back. */
async function decide(client: ConsoleClient, path: string, decision: "allow" | "deny"): Promise<URL> {
  const page = await client.fetch(path);
  expect(page.status).toBe(200);
  const html = await page.text();
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)?.[1];
  const binding = page.headers.getSetCookie().map((cookie) => cookie.split(";")[0]).join("; ");
  const form = new URLSearchParams({ handle: field("handle")!, csrf_token: field("csrf_token")!, decision });
  const answer = await SELF.fetch(`${ORIGIN}/console/oauth/authorize`, {
    method: "POST",
    headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded", cookie: `ffedge_session=${client.cookie}; ${binding}`, "cf-connecting-ip": client.address },
    body: form,
    redirect: "manual",
  });
  expect(answer.status).toBe(302);
  return new URL(answer.headers.get("location")!);
}

async function exchange(clientId: string, code: string, verifier: string): Promise<Response> {
  return SELF.fetch(`${ORIGIN}/oauth/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, client_id: clientId, code_verifier: verifier, resource: `${ORIGIN}/` }),
  });
}

/** The whole code flow with PKCE, as a remote connector runs it, for a signed-in console user. */
async function connect(): Promise<{ accessToken: string; clientId: string; client: ConsoleClient; userId: string; email: string }> {
  const user = await signedInUser();
  const clientId = await registerClient();
  const { verifier, challenge } = await pkce();
  const redirect = await decide(user.client, authorizePath(clientId, challenge), "allow");
  expect(redirect.origin + redirect.pathname).toBe(REDIRECT_URI);
  expect(redirect.searchParams.get("state")).toBe("state-123");
  const response = await exchange(clientId, redirect.searchParams.get("code")!, verifier);
  expect(response.status).toBe(200);
  const tokens = await response.json<{ access_token: string; token_type: string }>();
  expect(tokens.token_type.toLowerCase()).toBe("bearer");
  return { accessToken: tokens.access_token, clientId, ...user };
}

describe("OAuth for /mcp", () => {
  it("publishes protected resource and authorization server metadata", async () => {
    const resource = await SELF.fetch(`${ORIGIN}/.well-known/oauth-protected-resource`);
    expect(resource.status).toBe(200);
    expect(await resource.json()).toMatchObject({ resource: `${ORIGIN}/`, authorization_servers: [ORIGIN] });
    const server = await SELF.fetch(`${ORIGIN}/.well-known/oauth-authorization-server`);
    expect(server.status).toBe(200);
    expect(await server.json()).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/console/oauth/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      code_challenge_methods_supported: expect.arrayContaining(["S256"]),
    });
  });

  it("registers a client dynamically, and refuses a registration without redirect URIs", async () => {
    expect(await registerClient()).toMatch(/\S/);
    const bad = await SELF.fetch(`${ORIGIN}/oauth/register`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ client_name: "x" }) });
    expect(bad.status).toBe(400);
  });

  it("answers 401 with a WWW-Authenticate naming the resource metadata, the body still the API's problem", async () => {
    for (const token of [undefined, `ffe_${"0".repeat(48)}`, "not-a-token", "u:g:forged-secret"]) {
      const response = await mcp(token, "tools/list");
      expect(response.status, token).toBe(401);
      expect(response.headers.get("www-authenticate"), token).toContain(`Bearer resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource"`);
      expect(await response.json(), token).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
    }
  });

  it("sends a browser without a console session to sign-in, with a way back to the request", async () => {
    const clientId = await registerClient();
    const path = authorizePath(clientId, (await pkce()).challenge);
    const response = await SELF.fetch(`${ORIGIN}${path}`, { redirect: "manual" });
    expect(response.status).toBe(302);
    const signin = new URL(response.headers.get("location")!, ORIGIN);
    expect(signin.pathname).toBe("/console/signin");
    expect(signin.searchParams.get("next")).toBe(path);
  });

  it("shows the client's name and the user's address on a consent page under the console's policy", async () => {
    const { client, email } = await signedInUser();
    const clientId = await registerClient("Claude <script>");
    const page = await client.fetch(authorizePath(clientId, (await pkce()).challenge));
    const html = await page.text();
    expect(html).toContain(`Claude &lt;script&gt;</strong> wants to run ffmpeg tasks and read your files as <strong>${email}`);
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
  });

  it("refuses an authorization request with an unregistered redirect URI without redirecting", async () => {
    const { client } = await signedInUser();
    const clientId = await registerClient();
    const path = authorizePath(clientId, (await pkce()).challenge).replace(encodeURIComponent(REDIRECT_URI), encodeURIComponent("https://evil.example/cb"));
    const response = await client.fetch(path);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "VALIDATION_FAILED" });
  });

  it("refuses a consent form without the session's CSRF token", async () => {
    const { client } = await signedInUser();
    const clientId = await registerClient();
    const page = await client.fetch(authorizePath(clientId, (await pkce()).challenge));
    const handle = /name="handle" value="([^"]+)"/.exec(await page.text())![1]!;
    const response = await SELF.fetch(`${ORIGIN}/console/oauth/authorize`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/x-www-form-urlencoded", cookie: `ffedge_session=${client.cookie}` },
      body: new URLSearchParams({ handle, csrf_token: "wrong", decision: "allow" }),
      redirect: "manual",
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: "CSRF_FAILED" });
  });

  it("runs the code flow with PKCE, and the access token lists the tools on /mcp", async () => {
    const { accessToken } = await connect();
    const result = await rpcResult(accessToken, "tools/list");
    expect((result.tools as { name: string }[]).map((tool) => tool.name)).toContain("run_ffmpeg");
  });

  it("refuses a code exchanged with the wrong PKCE verifier", async () => {
    const { client } = await signedInUser();
    const clientId = await registerClient();
    const { challenge } = await pkce();
    const redirect = await decide(client, authorizePath(clientId, challenge), "allow");
    const response = await exchange(clientId, redirect.searchParams.get("code")!, (await pkce()).verifier);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("sends Deny back to the client as error=access_denied", async () => {
    const { client } = await signedInUser();
    const clientId = await registerClient();
    const redirect = await decide(client, authorizePath(clientId, (await pkce()).challenge, "s-deny"), "deny");
    expect(redirect.origin + redirect.pathname).toBe(REDIRECT_URI);
    expect(redirect.searchParams.get("error")).toBe("access_denied");
    expect(redirect.searchParams.get("state")).toBe("s-deny");
    expect(redirect.searchParams.has("code")).toBe(false);
  });

  it("acts as the token's user: its task is the user's, and another user's task is not found", async () => {
    const { accessToken, client } = await connect();
    const run = (await rpcResult(accessToken, "tools/call", { name: "run_ffmpeg", arguments: { command: COMMAND, wait_seconds: 0 } })) as { structuredContent: { task_id: string } };
    const own = await client.fetch(`/console/api/v1/tasks/${run.structuredContent.task_id}`);
    expect(own.status).toBe(200);
    const other = await createUser();
    const { task_id } = await (await postJson("/v1/tasks", other.key, { command: COMMAND })).json<{ task_id: string }>();
    const result = (await rpcResult(accessToken, "tools/call", { name: "get_task", arguments: { task_id } })) as { isError: boolean; content: { text: string }[] };
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(/^NOT_FOUND \(HTTP 404\)/);
    const listed = (await rpcResult(accessToken, "tools/call", { name: "list_tasks", arguments: {} })) as { structuredContent: { total: number } };
    expect(listed.structuredContent.total).toBe(1);
    const stored = (await rpcResult(accessToken, "tools/call", { name: "upload_from_url", arguments: { url: originUrl("/file/2048") } })) as { isError?: boolean; structuredContent: { url: string } };
    expect(stored.isError).toBeFalsy();
    const files = await (await client.fetch("/console/api/files")).json<{ total: number; files: { url: string }[] }>();
    expect(files.files.map((file) => file.url)).toEqual([stored.structuredContent.url]);
  });

  it("refuses an access token once it is revoked (RFC 7009), with the challenge naming invalid_token", async () => {
    const { accessToken, clientId } = await connect();
    expect((await mcp(accessToken, "ping")).status).toBe(200);
    const revoked = await SELF.fetch(`${ORIGIN}/oauth/token`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams({ token: accessToken, token_type_hint: "access_token", client_id: clientId }) });
    expect(revoked.status).toBe(200);
    const response = await mcp(accessToken, "ping");
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${ORIGIN}/.well-known/oauth-protected-resource", error="invalid_token"`);
    expect(await response.json()).toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("counts an OAuth caller against the user's rate limit", async () => {
    const { accessToken } = await connect();
    const response = await mcp(accessToken, "ping");
    expect(response.status).toBe(200);
    expect(response.headers.get("ratelimit-policy")).toMatch(/\d/);
  });

  it("keeps API keys working on /mcp, and an access token is no API key elsewhere", async () => {
    const { key } = await createUser();
    expect((await rpcResult(key, "tools/list")).tools).toBeInstanceOf(Array);
    const { accessToken } = await connect();
    const rest = await api("/v1/tasks", accessToken);
    expect(rest.status).toBe(401);
  });
});
