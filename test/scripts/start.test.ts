import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyLocalMigrations, execute, revokeKey } from "../../scripts/keys";
import { ensureDevKey, ensureDevVars, parseDotenv } from "../../scripts/start";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ffedge-start-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("ensureDevVars", () => {
  it("writes both secrets, random and private, to a missing .dev.vars", async () => {
    const path = join(dir, "fresh.vars");
    const values = await ensureDevVars(path);
    expect(values.SIGNING_SECRET).toMatch(/^[0-9a-f]{64}$/);
    expect(values.TRANSCODER_SECRET).toMatch(/^[0-9a-f]{64}$/);
    expect(values.SIGNING_SECRET).not.toBe(values.TRANSCODER_SECRET);
    expect(parseDotenv(await readFile(path, "utf8"))).toEqual(values);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("keeps existing values and lines, adding only what is missing", async () => {
    const path = join(dir, "partial.vars");
    await writeFile(path, "# mine\nSIGNING_SECRET=keep-me\nR2_ACCOUNT_ID=abc");
    const values = await ensureDevVars(path);
    expect(values.SIGNING_SECRET).toBe("keep-me");
    expect(values.TRANSCODER_SECRET).toMatch(/^[0-9a-f]{64}$/);
    const text = await readFile(path, "utf8");
    expect(text.startsWith("# mine\nSIGNING_SECRET=keep-me\nR2_ACCOUNT_ID=abc\nTRANSCODER_SECRET=")).toBe(true);
  });

  it("changes nothing when both secrets are there", async () => {
    const path = join(dir, "complete.vars");
    await writeFile(path, 'SIGNING_SECRET="a"\nexport TRANSCODER_SECRET=b\n');
    expect(await ensureDevVars(path)).toEqual({ SIGNING_SECRET: "a", TRANSCODER_SECRET: "b" });
    expect(await readFile(path, "utf8")).toBe('SIGNING_SECRET="a"\nexport TRANSCODER_SECRET=b\n');
  });
});

describe("ensureDevKey", () => {
  it("creates a key for user dev once, returns it again later, and replaces it once revoked", async () => {
    const persistTo = join(dir, "state");
    const keyFile = join(dir, "dev-api-key");
    await applyLocalMigrations(persistTo);

    const first = await ensureDevKey(keyFile, persistTo);
    expect(first).toMatch(/^ffe_[A-Za-z0-9_-]{43}$/);
    expect((await readFile(keyFile, "utf8")).trim()).toBe(first);
    expect((await stat(keyFile)).mode & 0o777).toBe(0o600);
    expect(await ensureDevKey(keyFile, persistTo)).toBe(first);

    await revokeKey({ remote: false, persistTo }, first.slice(0, 12));
    const second = await ensureDevKey(keyFile, persistTo);
    expect(second).not.toBe(first);
    expect((await readFile(keyFile, "utf8")).trim()).toBe(second);
    const [users] = await execute({ remote: false, persistTo }, [{ sql: "SELECT COUNT(*) AS n FROM users WHERE name = ?", params: ["dev"] }]);
    expect(users).toEqual([{ n: 1 }]);
  }, 60_000);
});
