import { readFileSync, readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const REPOSITORY = "edge/tasks/repository.ts";

/** SQL that names the `tasks` table: reads, writes, joins and sub-queries (SQL here is written in upper case). */
const TASK_SQL = /\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+tasks\b/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [relative(ROOT, path)] : [];
  });
}

function taskSqlLines(text: string): number[] {
  return text.split("\n").flatMap((line, index) => (TASK_SQL.test(line) ? [index + 1] : []));
}

describe("task SQL", () => {
  it(`lives only in ${REPOSITORY}`, () => {
    const files = sourceFiles(join(ROOT, "edge"));
    expect(files).toContain(REPOSITORY);
    const outside = files.filter((file) => file !== REPOSITORY).flatMap((file) => taskSqlLines(readFileSync(join(ROOT, file), "utf8")).map((line) => `${file}:${line}`));
    expect(outside).toEqual([]);
    expect(taskSqlLines(readFileSync(join(ROOT, REPOSITORY), "utf8")).length).toBeGreaterThan(10);
  });

  it("recognises every kind of statement on the table, and not the word in prose or other tables", () => {
    const found = [
      'db.prepare("SELECT * FROM tasks WHERE id = ?")',
      "`UPDATE tasks SET status = ?`",
      '"INSERT INTO tasks (id) VALUES (?)"',
      '"DELETE FROM tasks WHERE user_id = ?"',
      "AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.user_id = users.id)",
      "SELECT f.key FROM files f JOIN tasks t ON t.id = f.task_id",
    ];
    const ignored = ["// Removes the user from tasks it shares.", '"SELECT * FROM tasks_archive"', '"DELETE FROM task_events"', "listTasks(db, userId, query)"];
    expect(found.filter((line) => !TASK_SQL.test(line))).toEqual([]);
    expect(ignored.filter((line) => TASK_SQL.test(line))).toEqual([]);
  });
});
