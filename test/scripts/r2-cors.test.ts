import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../scripts/keys";

interface CorsRule {
  allowed: { origins: string[]; methods: string[]; headers?: string[] };
  exposeHeaders?: string[];
  maxAgeSeconds?: number;
}

describe("scripts/r2-cors.json (wrangler r2 bucket cors set ffedge-files --file scripts/r2-cors.json)", () => {
  it("is in the R2 API's shape, which wrangler requires (a rules array, lowercase keys under 'allowed')", async () => {
    const document = JSON.parse(await readFile(join(ROOT, "scripts/r2-cors.json"), "utf8")) as { rules: CorsRule[]; CORSRules?: unknown };
    expect(document.CORSRules).toBeUndefined();
    expect(Array.isArray(document.rules)).toBe(true);
    for (const rule of document.rules) expect(Object.keys(rule.allowed).every((key) => ["origins", "methods", "headers"].includes(key))).toBe(true);
  });

  it("lets a browser send the presigned PUT: the method and the one signed header it sets itself (Content-Type)", async () => {
    const { rules } = JSON.parse(await readFile(join(ROOT, "scripts/r2-cors.json"), "utf8")) as { rules: CorsRule[] };
    const put = rules.find((rule) => rule.allowed.methods.includes("PUT"));
    expect(put?.allowed.origins.length).toBeGreaterThan(0);
    // Content-Length and Host are signed too, but browsers set them and never preflight them.
    expect(put?.allowed.headers?.map((header) => header.toLowerCase())).toContain("content-type");
    expect(put?.exposeHeaders).toContain("ETag");
  });
});
