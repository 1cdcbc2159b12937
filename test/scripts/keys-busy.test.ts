import { mkdtemp, readdir, rm } from "node:fs/promises";
import { DatabaseSync } from "node:sqlite";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { applyLocalMigrations, createKey, listKeys } from "../../scripts/keys";

it("creates a key while another process holds the local database (as workerd does while the stack runs)", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ffedge-keys-busy-"));
  try {
    await applyLocalMigrations(dir);
    const d1 = join(dir, "v3/d1/miniflare-D1DatabaseObject");
    const file = (await readdir(d1)).find((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite")!;
    const holder = new DatabaseSync(join(d1, file));
    holder.exec("BEGIN EXCLUSIVE");
    // Held long enough that the first attempt meets SQLITE_BUSY (wrangler takes seconds to start).
    const release = setTimeout(() => holder.exec("COMMIT"), 12_000);
    const { prefix } = await createKey({ remote: false, persistTo: dir }, "busy-user");
    clearTimeout(release);
    if (holder.isTransaction) holder.exec("COMMIT");
    holder.close();
    expect((await listKeys({ remote: false, persistTo: dir })).map((row) => row.prefix)).toEqual([prefix]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 120_000);
