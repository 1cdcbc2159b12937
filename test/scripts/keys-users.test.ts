import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, applyLocalMigrations, execute } from "../../scripts/keys";

/** Issue 18 #3: `keys create --user <x>` resolves one user unambiguously, by id, name or address. */

let persistTo: string;

beforeAll(async () => {
  persistTo = await mkdtemp(join(tmpdir(), "ffedge-keys-users-"));
  await applyLocalMigrations(persistTo);
}, 60_000);
afterAll(async () => {
  await rm(persistTo, { recursive: true, force: true });
});

function keys(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("npm", ["run", "--silent", "keys", "--", ...args, "--persist-to", persistTo], { cwd: ROOT }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function sql(text: string, ...params: string[]) {
  const [rows] = await execute({ remote: false, persistTo }, [{ sql: text, params }]);
  return rows ?? [];
}

/** A user as a console sign-up or an earlier operator left it. */
async function user(id: string, name: string, email: string | null): Promise<void> {
  await execute({ remote: false, persistTo }, [{ sql: "INSERT INTO users (id, name, email, created_at) VALUES (?, ?, ?, ?)", params: [id, name, email, new Date().toISOString()] }]);
}

const keysOf = async (userId: string) => (await sql("SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ?", userId))[0]!.n;

describe("keys create --user <address>", () => {
  it("refuses, naming both, when the value is one user's name and another user's address, and creates nothing", async () => {
    await user("usr_0000000000000a01", "ops-carol", "carol@example.com");
    await user("usr_0000000000000a02", "carol@example.com", "mallory@example.net");
    const run = await keys("create", "--user", "carol@example.com");
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("usr_0000000000000a01");
    expect(run.stderr).toContain("usr_0000000000000a02");
    expect(run.stderr).toContain("--user usr_");
    expect(await keysOf("usr_0000000000000a01")).toBe(0);
    expect(await keysOf("usr_0000000000000a02")).toBe(0);
  });

  it("never attaches a key to a user merely named that address whose own address is another", async () => {
    await user("usr_0000000000000b01", "dave@example.com", "mallory2@example.net");
    const run = await keys("create", "--user", "dave@example.com");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("mallory2@example.net");
    expect(await keysOf("usr_0000000000000b01")).toBe(0);
  });

  it("attaches the key to the user whose address it is, and takes a user's id to pick one", async () => {
    await user("usr_0000000000000c01", "ops-erin", "erin@example.com");
    expect((await keys("create", "--user", "Erin@Example.com")).code).toBe(0);
    expect(await keysOf("usr_0000000000000c01")).toBe(1);
    expect((await keys("create", "--user", "usr_0000000000000c01")).code).toBe(0);
    expect(await keysOf("usr_0000000000000c01")).toBe(2);
    expect(await sql("SELECT COUNT(*) AS n FROM users WHERE name IN (?, ?)", "Erin@Example.com", "usr_0000000000000c01")).toEqual([{ n: 0 }]);
  });

  it("drops a pending sign-up's password when it gives that user a key (the owner sets one by reset)", async () => {
    await user("usr_0000000000000d01", "frank@example.com", "frank@example.com");
    await sql("UPDATE users SET pending_password_hash = ? WHERE id = ?", "scrypt$x", "usr_0000000000000d01");
    await sql("INSERT INTO mail_tokens (hash, user_id, purpose, created_at, expires_at) VALUES (?, ?, ?, ?, ?)", "h-frank", "usr_0000000000000d01", "verify", new Date().toISOString(), new Date(Date.now() + 86_400_000).toISOString());
    expect((await keys("create", "--user", "frank@example.com")).code).toBe(0);
    expect(await keysOf("usr_0000000000000d01")).toBe(1);
    expect(await sql("SELECT COUNT(*) AS n FROM mail_tokens WHERE user_id = ?", "usr_0000000000000d01")).toEqual([{ n: 0 }]);
    expect(await sql("SELECT pending_password_hash FROM users WHERE id = ?", "usr_0000000000000d01")).toEqual([{ pending_password_hash: null }]);
  });

  it("refuses an --email that is another user's address", async () => {
    await user("usr_0000000000000e01", "grace@example.com", "grace@example.com");
    const run = await keys("create", "--user", "ops-grace", "--email", "grace@example.com");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("usr_0000000000000e01");
    expect(await sql("SELECT COUNT(*) AS n FROM users WHERE name = ?", "ops-grace")).toEqual([{ n: 0 }]);
  });
});
