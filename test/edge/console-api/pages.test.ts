import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ORIGIN, signedInUser } from "./client";

const SIGNED_IN = ["/console/tasks", "/console/tasks/tsk_x", "/console/new", "/console/files", "/console/keys", "/console/usage", "/console/webhooks", "/console/presets", "/console/destinations", "/console/account"];

async function page(path: string, cookie?: string): Promise<Response> {
  return SELF.fetch(`${ORIGIN}${path}`, { redirect: "manual", headers: cookie ? { cookie: `ffedge_session=${cookie}` } : {} });
}

describe("console pages behind sign-in", () => {
  it("send a browser that never signed in to sign-in, back to the page it asked for, without saying a session ended", async () => {
    for (const path of SIGNED_IN) {
      const response = await page(path);
      expect(response.status, path).toBe(302);
      expect(response.headers.get("location"), path).toBe(`/console/signin?${new URLSearchParams({ next: path })}`);
    }
    const withQuery = await page("/console/tasks?status=failed");
    expect(withQuery.headers.get("location")).toBe(`/console/signin?${new URLSearchParams({ next: "/console/tasks?status=failed" })}`);
  });

  it("say a session ended only to a browser whose cookie names no live session", async () => {
    for (const path of ["/console/files", "/console/new"]) {
      const response = await page(path, "a-session-that-ended");
      expect(response.headers.get("location"), path).toBe(`/console/signin?${new URLSearchParams({ next: path, reason: "expired" })}`);
    }
    // The other pages ask GET /console/api/session from the browser, which sends an ended session to sign-in with reason=expired.
    expect((await page("/console/usage", "a-session-that-ended")).status).toBe(200);
  });

  it("render for a live session, with the API's base URL for the snippets and the icon in the head", async () => {
    const { client } = await signedInUser();
    const html = await (await page("/console/tasks", client.cookie)).text();
    expect(html).toContain(`data-api-url="http://127.0.0.1:8787"`);
    expect(html).toContain(`<code id="api-url" class="mono">http://127.0.0.1:8787</code>`);
    expect(html).toMatch(/<link rel="icon" type="image\/svg\+xml" href="\/console\/assets\/favicon\.[0-9a-f]{12}\.svg"\/>/);
    expect(html).toContain(`<button type="button" id="sign-out" class="secondary">Sign out</button>`);
    expect(html).not.toMatch(/ffe_[A-Za-z0-9_-]{20,}/);
  });

  it("leave the signed-out pages open to all, with the icon and without the API URL", async () => {
    const response = await page("/console/signin");
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain(`rel="icon"`);
    expect(html).not.toContain("data-api-url");
    expect(html).not.toContain(`id="sign-out"`);
  });
});

describe("the console's icon", () => {
  it("is an SVG under a content-hashed URL, cached for a year", async () => {
    const html = await (await page("/console/signin")).text();
    const href = html.match(/href="(\/console\/assets\/favicon\.[0-9a-f]{12}\.svg)"/)![1]!;
    const icon = await SELF.fetch(`${ORIGIN}${href}`);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
    expect(icon.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await icon.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    expect((await SELF.fetch(`${ORIGIN}/console/assets/favicon.000000000000.svg`)).status).toBe(404);
  });
});
