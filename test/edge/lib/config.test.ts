import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../../edge/index";
import { configProblems } from "../../../edge/lib/config";
import { expectProblem } from "../../helpers/problems";
import { productionEnv } from "../helpers";

function settingsOf(target: Env): string[] {
  return configProblems(target).map((problem) => problem.setting);
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("configProblems", () => {
  it("finds nothing wrong with a complete production configuration", () => {
    expect(configProblems(productionEnv())).toEqual([]);
  });

  it("keeps development defaults: the local stack and tests need no production settings", () => {
    expect(configProblems(env)).toEqual([]);
  });

  it.each([
    ["a missing transcoder secret", { TRANSCODER_SECRET: undefined }, "TRANSCODER_SECRET"],
    ["a short transcoder secret", { TRANSCODER_SECRET: "short" }, "TRANSCODER_SECRET"],
    ["a missing signing secret", { SIGNING_SECRET: undefined }, "SIGNING_SECRET"],
    ["a 31-character signing secret", { SIGNING_SECRET: "s".repeat(31) }, "SIGNING_SECRET"],
    ["no D1 id", { D1_DATABASE_ID: undefined }, "D1_DATABASE_ID"],
    ["the placeholder D1 id", { D1_DATABASE_ID: "REPLACE_WITH_D1_DATABASE_ID" }, "D1_DATABASE_ID"],
    ["the local stack's all-zero D1 id", { D1_DATABASE_ID: "00000000-0000-0000-0000-000000000000" }, "D1_DATABASE_ID"],
    ["no R2 account", { R2_ACCOUNT_ID: undefined }, "R2_ACCOUNT_ID"],
    ["no R2 access key", { R2_ACCESS_KEY_ID: "" }, "R2_ACCESS_KEY_ID"],
    ["no R2 secret key", { R2_SECRET_ACCESS_KEY: undefined }, "R2_SECRET_ACCESS_KEY"],
    ["an example.com CDN URL", { PUBLIC_URL: "https://cdn.example.com" }, "PUBLIC_URL"],
    ["a plain-http CDN URL", { PUBLIC_URL: "http://cdn.ffedge-user.net" }, "PUBLIC_URL"],
    ["an empty China URL", { CN_PUBLIC_URL: "" }, "CN_PUBLIC_URL"],
    ["a localhost API URL", { EDGE_URL: "https://localhost" }, "EDGE_URL"],
    ["an IP-literal API URL", { EDGE_URL: "https://203.0.113.7" }, "EDGE_URL"],
    ["user content on the API's hostname", { PUBLIC_URL: "https://api.ffedge.net" }, "PUBLIC_URL"],
    ["China user content on the API's hostname", { CN_PUBLIC_URL: "https://api.ffedge.net/files" }, "CN_PUBLIC_URL"],
  ] as [string, Partial<Env>, string][])("names the setting for %s", (_label, overrides, setting) => {
    expect(settingsOf(productionEnv(overrides))).toEqual([setting]);
  });

  it("lists the production placeholders wrangler.toml ships", () => {
    const shipped = productionEnv({ PUBLIC_URL: "https://cdn.example.com", CN_PUBLIC_URL: "https://cdn.example.cn", EDGE_URL: "https://api.example.com", D1_DATABASE_ID: "REPLACE_WITH_D1_DATABASE_ID" });
    expect(settingsOf(shipped).sort()).toEqual(["CN_PUBLIC_URL", "D1_DATABASE_ID", "EDGE_URL", "PUBLIC_URL"]);
  });
});

describe("a misconfigured production Worker", () => {
  async function request(target: Env, path: string): Promise<Response> {
    const ctx = createExecutionContext();
    const response = await worker.fetch(new Request(`https://api.ffedge.net${path}`), target, ctx);
    await waitOnExecutionContext(ctx);
    return response;
  }

  it("answers every request 500 CONFIG_INVALID and logs the setting, without naming it to the client", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    for (const path of ["/v1/me", "/openapi.json", "/uploads/usr_x/0123456789abcdef0123456789abcdef.mp4"]) {
      const body = await expectProblem(await request(productionEnv({ SIGNING_SECRET: "dev" }), path), 500, "CONFIG_INVALID");
      expect(String(body.detail)).not.toContain("SIGNING_SECRET");
    }
    const lines = log.mock.calls.map(([line]) => JSON.parse(String(line)) as { msg: string; setting: string });
    expect(lines).toContainEqual(expect.objectContaining({ msg: "configuration invalid", setting: "SIGNING_SECRET" }));
  });

  it("serves normally once configured", async () => {
    expect((await request(productionEnv(), "/openapi.json")).status).toBe(200);
  });
});
