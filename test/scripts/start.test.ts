import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyLocalMigrations, execute, revokeKey } from "../../scripts/keys";
import { printNewMail } from "../../scripts/lib/dev-outbox";
import { ensureDevKey, ensureDevVars, parseDotenv } from "../../scripts/lib/dev-state";

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
    // Each step is a wrangler d1 process of its own: over a minute on a busy 2-core machine.
  }, 180_000);
});

describe("printNewMail", () => {
  it("prints each outbox mail once, oldest first, with its links", async () => {
    const { createServer } = await import("node:http");
    let messages = [{ id: "m1", to: "ada@example.com", subject: "Confirm your ffedge account", links: ["http://localhost:8787/console/verify?token=abc"] }];
    const server = createServer((request, response) => {
      expect(request.url).toBe("/console/api/dev/outbox");
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ messages }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    try {
      const seen = new Set<string>();
      const printed: string[] = [];
      expect(await printNewMail(url, seen, (text) => printed.push(text))).toBe(true);
      messages = [{ id: "m2", to: "ada@example.com", subject: "Reset your ffedge password", links: ["http://localhost:8787/console/reset?token=def"] }, ...messages];
      await printNewMail(url, seen, (text) => printed.push(text));
      expect(printed).toEqual([
        "[mail] to ada@example.com: Confirm your ffedge account\n  http://localhost:8787/console/verify?token=abc\n",
        "[mail] to ada@example.com: Reset your ffedge password\n  http://localhost:8787/console/reset?token=def\n",
      ]);
    } finally {
      server.close();
    }
    expect(await printNewMail("http://127.0.0.1:9", new Set(), () => {})).toBe(false);
  });
});
