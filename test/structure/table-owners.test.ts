import { readFileSync, readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * Each D1 table's one owner in edge/: the only module whose SQL names it. Others call the
 * owner's functions, or put the owner's SQL conditions (e.g. USER_HAS_TASKS) into their own
 * statements. The key CLI (scripts/, shared/accounts.ts) is outside the map: it runs in Node
 * through `wrangler d1 execute`, where the edge's modules and their D1 binding do not exist.
 */
const OWNERS: Record<string, string> = {
  users: "edge/accounts/users.ts",
  api_keys: "edge/accounts/api-keys.ts",
  sessions: "edge/accounts/sessions.ts",
  mail_tokens: "edge/accounts/mail-tokens.ts",
  signin_failures: "edge/accounts/signin-limits.ts",
  dev_outbox: "edge/accounts/mail.ts",
  files: "edge/files/records.ts",
  tus_uploads: "edge/files/tus/repository.ts",
  open_multipart_uploads: "edge/files/open-multiparts.ts",
  idempotency_keys: "edge/lib/idempotency.ts",
  tasks: "edge/tasks/repository.ts",
  presets: "edge/presets/repository.ts",
  webhook_secrets: "edge/webhooks/signing.ts",
  webhook_deliveries: "edge/webhooks/delivery.ts",
  destinations: "edge/destinations/repository.ts",
  webhook_endpoints: "edge/webhooks/endpoints.ts",
  webhook_endpoint_secrets: "edge/webhooks/endpoints.ts",
  webhook_endpoint_events: "edge/webhooks/endpoint-log.ts",
  webhook_endpoint_attempts: "edge/webhooks/endpoint-log.ts",
};

/** SQL that names `table`: reads, writes, joins and sub-queries (SQL here is written in upper case). */
function sqlNaming(table: string): RegExp {
  return new RegExp(`\\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\\s+${table}\\b`);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [relative(ROOT, path)] : [];
  });
}

function linesMatching(text: string, pattern: RegExp): number[] {
  return text.split("\n").flatMap((line, index) => (pattern.test(line) ? [index + 1] : []));
}

function migrationTables(): string[] {
  const dir = join(ROOT, "migrations");
  const sql = readdirSync(dir).filter((name) => name.endsWith(".sql")).map((name) => readFileSync(join(dir, name), "utf8")).join("\n");
  const created = [...sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)/gi)].map((match) => match[1]!);
  const dropped = new Set([...sql.matchAll(/DROP TABLE (?:IF EXISTS )?(\w+)/gi)].map((match) => match[1]!));
  return [...new Set(created)].filter((table) => !dropped.has(table)).sort();
}

describe("table owners", () => {
  it("name an owner for every table the migrations create, and only for those", () => {
    expect(Object.keys(OWNERS).sort()).toEqual(migrationTables());
  });

  it("are the only modules whose SQL names their table", () => {
    const files = sourceFiles(join(ROOT, "edge"));
    const texts = new Map(files.map((file) => [file, readFileSync(join(ROOT, file), "utf8")]));
    const strays = Object.entries(OWNERS).flatMap(([table, owner]) => {
      expect(files, `owner of ${table}`).toContain(owner);
      expect(linesMatching(texts.get(owner)!, sqlNaming(table)).length, `${owner} holds ${table}'s SQL`).toBeGreaterThan(0);
      return files.filter((file) => file !== owner).flatMap((file) => linesMatching(texts.get(file)!, sqlNaming(table)).map((line) => `${table} in ${file}:${line}`));
    });
    expect(strays).toEqual([]);
  });

  it("recognise every kind of statement on a table, and not the word in prose or other tables", () => {
    const tasks = sqlNaming("tasks");
    const found = [
      'db.prepare("SELECT * FROM tasks WHERE id = ?")',
      "`UPDATE tasks SET status = ?`",
      '"INSERT INTO tasks (id) VALUES (?)"',
      '"DELETE FROM tasks WHERE user_id = ?"',
      "AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.user_id = users.id)",
      "SELECT f.key FROM files f JOIN tasks t ON t.id = f.task_id",
      "ALTER TABLE tasks ADD COLUMN retries INTEGER",
    ];
    const ignored = ["// Removes the user from tasks it shares.", '"SELECT * FROM tasks_archive"', '"DELETE FROM task_events"', "listTasks(db, userId, query)", "SELECT id FROM (SELECT id FROM users)"];
    expect(found.filter((line) => !tasks.test(line))).toEqual([]);
    expect(ignored.filter((line) => tasks.test(line))).toEqual([]);
  });

  it("read the tables of the migrations, created and not dropped", () => {
    expect(migrationTables()).toEqual(expect.arrayContaining(["users", "tasks", "files", "sessions"]));
  });
});
