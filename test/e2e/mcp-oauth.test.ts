import { once } from "node:events";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type OAuthClientProvider, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { OAuthClientInformationMixed, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack } from "../../scripts/lib/local-stack";
import { launchChromium, newSession } from "./browser";
import { PASSWORD, PATIENT, signedInUser } from "./console-session";

let stack: Stack;
let browser: Browser;
let callback: Server;
let redirectUrl: string;
let codes: Promise<string>;

/** An MCP client's side of OAuth as a remote connector keeps it: in memory, for one connector. */
class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  opened?: URL;
  get redirectUrl() {
    return redirectUrl;
  }
  get clientMetadata() {
    return { client_name: "ffedge e2e connector", redirect_uris: [redirectUrl], grant_types: ["authorization_code", "refresh_token"], response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(client: OAuthClientInformationMixed) {
    this.client = client;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.opened = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

beforeAll(async () => {
  [stack, browser] = await Promise.all([Stack.start(), launchChromium()]);
  // The connector's loopback redirect URI: it receives the code as a desktop MCP client's would.
  let received: (code: string) => void;
  codes = new Promise((resolve) => (received = resolve));
  callback = createServer((request, response) => {
    const code = new URL(request.url ?? "/", "http://127.0.0.1").searchParams.get("code");
    if (code) received(code);
    response.writeHead(200, { "content-type": "text/plain" }).end("Connected; you can close this window.");
  });
  callback.listen(0, "127.0.0.1");
  await once(callback, "listening");
  redirectUrl = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
}, 120_000);

afterAll(async () => {
  callback?.close();
  await browser?.close();
  await stack?.stop();
});

describe("OAuth for /mcp with the official MCP client and a real browser", () => {
  it("discovers OAuth from the 401, signs in through the console, asks consent, then runs tools as the user", { timeout: 120_000 }, async () => {
    const { email, context: firstProfile } = await signedInUser(stack, browser);
    await firstProfile.close();
    const provider = new MemoryProvider();
    const url = new URL(`${stack.edgeUrl}/mcp`);

    const first = new Client({ name: "ffedge-e2e", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toBeTruthy();
    expect(provider.opened?.pathname).toBe("/console/oauth/authorize");

    // A browser without a console session: sign-in first, then back to the consent page.
    const { page, context } = await newSession(browser);
    await page.goto(provider.opened!.toString());
    await page.waitForURL(/\/console\/signin\?/, PATIENT);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/console\/oauth\/authorize\?/, PATIENT);
    await expect.poll(() => page.locator("main").textContent(), PATIENT).toContain(`ffedge e2e connector wants to run ffmpeg tasks and read your files as ${email}`);
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForURL(new RegExp(`^${redirectUrl}`), PATIENT);
    const code = await codes;
    await context.close();

    await transport.finishAuth(code);
    expect(provider.saved?.access_token).toBeTruthy();
    const client = new Client({ name: "ffedge-e2e", version: "1.0.0" });
    await client.connect(new StreamableHTTPClientTransport(url, { authProvider: provider }));
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toContain("run_ffmpeg");
      const run = await client.callTool({ name: "run_ffmpeg", arguments: { command: "ffmpeg -i https://example.com/in.mp4 -t 1 out.mp4", wait_seconds: 0 } });
      expect(run.isError, JSON.stringify(run.content)).toBeFalsy();
      const listed = await client.callTool({ name: "list_tasks", arguments: {} });
      expect(listed.structuredContent).toMatchObject({ total: 1 });
    } finally {
      await client.close();
    }
  });
});
