import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../shared/token-hash";
import { ROOT, execute, renderSql, targetFlags } from "../../scripts/keys";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

let persistTo: string;

beforeAll(async () => {
  persistTo = await mkdtemp(join(tmpdir(), "ffedge-keys-"));
});
afterAll(async () => {
  await rm(persistTo, { recursive: true, force: true });
});

/** Runs the CLI exactly as documented, against the temporary local state. */
function keys(...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile("npm", ["run", "--silent", "keys", "--", ...args, "--persist-to", persistTo], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** Reads the temporary D1 directly, bypassing the CLI. */
async function query(sql: string, ...params: string[]) {
  const [rows] = await execute({ remote: false, persistTo }, [{ sql, params }]);
  return rows ?? [];
}

describe("keys create", () => {
  it("prints only the new key on stdout and stores only its hash and prefix", async () => {
    const run = await keys("create", "--user", "alice");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ffe_[A-Za-z0-9_-]{43}\n$/);
    const key = run.stdout.trim();
    const rows = await query("SELECT k.hash, k.prefix, u.name FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.prefix = ?", key.slice(0, 12));
    expect(rows).toEqual([{ hash: await hashToken(key), prefix: key.slice(0, 12), name: "alice" }]);
  });

  it("adds a second key to an existing user instead of a second user", async () => {
    const first = (await keys("create", "--user", "bob")).stdout.trim();
    const second = (await keys("create", "--user", "bob")).stdout.trim();
    expect(second).not.toBe(first);
    expect(await query("SELECT COUNT(*) AS n FROM users WHERE name = ?", "bob")).toEqual([{ n: 1 }]);
    expect(await query("SELECT COUNT(*) AS n FROM api_keys k JOIN users u ON u.id = k.user_id WHERE u.name = ?", "bob")).toEqual([{ n: 2 }]);
  });

  it("sets the user's email with --email, so the console's password reset can reach the user", async () => {
    const run = await keys("create", "--user", "dora", "--email", "Dora@Example.com");
    expect(run.code).toBe(0);
    expect(await query("SELECT email, password_hash FROM users WHERE name = ?", "dora")).toEqual([{ email: "dora@example.com", password_hash: null }]);
    const refused = await keys("create", "--user", "dora", "--email", "not an address");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("not a valid email address");
  });

  it.each([["bad name"], ["x'; DROP TABLE users; --"], [""]])("refuses the user name %j with a message on stderr and creates nothing", async (name) => {
    const run = await keys("create", "--user", name);
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/keys: /);
    expect(await query("SELECT COUNT(*) AS n FROM users WHERE name = ?", name)).toEqual([{ n: 0 }]);
  });
});

describe("keys list and revoke", () => {
  it("lists prefix, user, created and revoked, never a key, and shows a revocation", async () => {
    const key = (await keys("create", "--user", "carol")).stdout.trim();
    const prefix = key.slice(0, 12);
    const before = await keys("list");
    expect(before.code).toBe(0);
    expect(before.stdout.split("\n")[0]).toMatch(/^PREFIX\s+USER\s+CREATED\s+REVOKED$/);
    expect(before.stdout).toMatch(new RegExp(`^${prefix}\\s+carol\\s+\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z\\s+-$`, "m"));
    expect(before.stdout).not.toContain(key);

    const revoke = await keys("revoke", prefix);
    expect(revoke).toMatchObject({ code: 0, stdout: "" });
    expect(revoke.stderr).toContain("revoked");
    const after = await keys("list");
    expect(after.stdout).toMatch(new RegExp(`^${prefix}\\s+carol\\s+\\S+Z\\s+\\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z$`, "m"));
    expect(await query("SELECT revoked_at IS NOT NULL AS revoked FROM api_keys WHERE prefix = ?", prefix)).toEqual([{ revoked: 1 }]);
  });

  it("keeps the first revocation time when a key is revoked twice", async () => {
    const prefix = (await keys("create", "--user", "dave")).stdout.slice(0, 12);
    await keys("revoke", prefix);
    const [first] = await query("SELECT revoked_at FROM api_keys WHERE prefix = ?", prefix);
    const again = await keys("revoke", prefix);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain("already revoked");
    expect(await query("SELECT revoked_at FROM api_keys WHERE prefix = ?", prefix)).toEqual([first]);
  });

  it("fails on an unknown prefix, treating quotes in it as text", async () => {
    const run = await keys("revoke", "x'; DROP TABLE api_keys; --");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("No key has the prefix");
    expect((await query("SELECT COUNT(*) AS n FROM api_keys")).length).toBe(1);
  });
});

describe("keys usage errors", () => {
  it.each([[["frob"]], [[]], [["create"]], [["revoke"]], [["list", "extra"]], [["list", "--remote"]]])("exits 2 with the usage on stderr for %j", async (args) => {
    const run = await keys(...args);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/keys: /);
  });
});

describe("wrangler target", () => {
  it("addresses the production environment's D1 with --remote, and the local one otherwise", () => {
    expect(targetFlags({ remote: true })).toEqual(["--remote", "--env", "production"]);
    expect(targetFlags({ remote: false })).toEqual(["--local"]);
    expect(targetFlags({ remote: false, persistTo: "/tmp/x" })).toEqual(["--local", "--persist-to", "/tmp/x"]);
  });
});

describe("renderSql", () => {
  it("renders parameters as quoted literals, doubling quotes and writing NULL", () => {
    expect(renderSql({ sql: "SELECT ?, ?, ?", params: ["a", "it's", null] })).toBe("SELECT 'a', 'it''s', NULL");
    expect(renderSql({ sql: "UPDATE t SET a = ? WHERE b = ?", params: ["'); DROP TABLE t; --", "x"] })).toBe("UPDATE t SET a = '''); DROP TABLE t; --' WHERE b = 'x'");
  });

  it("refuses mismatched parameters, NUL characters and literals in the template", () => {
    expect(() => renderSql({ sql: "SELECT ?, ?", params: ["a"] })).toThrow();
    expect(() => renderSql({ sql: "SELECT ?", params: ["a", "b"] })).toThrow();
    expect(() => renderSql({ sql: "SELECT ?", params: ["a\0b"] })).toThrow();
    expect(() => renderSql({ sql: "SELECT '?', ?", params: ["a"] })).toThrow();
  });
});
