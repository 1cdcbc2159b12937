import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const DOC = "docs/architecture.md";
const text = readFileSync(join(ROOT, DOC), "utf8");

/** Every path the map names: `edge/…`, `shared/…`, ..., migration files and relative links. */
function namedPaths(): string[] {
  const paths = [...text.matchAll(/\b(?:edge|shared|transcoder|migrations|scripts|test|bench|docs)\/[A-Za-z0-9_./-]*/g)].map((match) => match[0].replace(/[.]+$/, ""));
  const migrations = [...text.matchAll(/\b\d{4}_[a-z0-9_]+\.sql\b/g)].map((match) => `migrations/${match[0]}`);
  const links = [...text.matchAll(/\]\(([^)#]+\.md)\)/g)].map((match) => join("docs", match[1]!));
  return [...new Set([...paths, ...migrations, ...links])].sort();
}

describe(DOC, () => {
  it("names only files and folders that exist", () => {
    const paths = namedPaths();
    expect(paths.length).toBeGreaterThan(50);
    expect(paths.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });

  it("lists every D1 table a migration creates", () => {
    const migrations = readdirSync(join(ROOT, "migrations")).filter((name) => name.endsWith(".sql"));
    const tables = migrations.flatMap((name) => [...readFileSync(join(ROOT, "migrations", name), "utf8").matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)/g)].map((match) => match[1]!));
    expect(tables.length).toBeGreaterThan(10);
    expect(tables.filter((table) => !text.includes(`\`${table}\``))).toEqual([]);
  });

  it("names every route module, Durable Object class and queue", () => {
    const routeModules = readdirSync(join(ROOT, "edge/routes")).map((name) => `edge/routes/${name}`);
    const objects = [...readFileSync(join(ROOT, "edge/index.ts"), "utf8").matchAll(/export \{ (\w+) \} from "\.\//g)].map((match) => match[1]!);
    const queues = [...new Set([...readFileSync(join(ROOT, "wrangler.toml"), "utf8").matchAll(/queue = "([\w-]+)"/g)].map((match) => match[1]!))].filter((name) => !name.endsWith("-dead"));
    expect(objects.length).toBeGreaterThan(2);
    expect(queues.length).toBeGreaterThan(1);
    expect([...routeModules, ...objects, ...queues].filter((name) => !text.includes(name))).toEqual([]);
  });
});
