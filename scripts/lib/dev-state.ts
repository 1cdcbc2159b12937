import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { isWellFormedApiKey } from "../../shared/api-keys";
import { hashToken } from "../../shared/token-hash";
import { createKey, execute } from "../keys";

/** The development user `npm start` makes a key for. */
export const DEV_USER = "dev";
const SECRETS = ["SIGNING_SECRET", "TRANSCODER_SECRET"] as const;

/**
 * Makes sure `path` (dotenv format) defines every secret, adding a random value for each one
 * missing; lines already there are kept as they are. Returns the resulting values.
 */
export async function ensureDevVars(path: string): Promise<Record<string, string>> {
  const existing = existsSync(path) ? await readFile(path, "utf8") : "";
  const values = parseDotenv(existing);
  const missing = SECRETS.filter((name) => !values[name]);
  if (missing.length > 0) {
    const added = missing.map((name) => `${name}=${randomBytes(32).toString("hex")}`);
    const separator = existing === "" || existing.endsWith("\n") ? "" : "\n";
    await writeFile(path, `${existing}${separator}${added.join("\n")}\n`, { mode: 0o600 });
    Object.assign(values, parseDotenv(added.join("\n")));
  }
  return values;
}

export function parseDotenv(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
    if (match) values[match[1]!] = match[2]!.replace(/^(['"])(.*)\1$/, "$2");
  }
  return values;
}

/**
 * The development key: the one in `keyFile` while the local D1 still accepts it, otherwise a
 * new key for user `dev`, written to `keyFile` (mode 0600).
 */
export async function ensureDevKey(keyFile: string, persistTo?: string): Promise<string> {
  const stored = existsSync(keyFile) ? (await readFile(keyFile, "utf8")).trim() : "";
  if (isWellFormedApiKey(stored) && (await isActiveKey(stored, persistTo))) return stored;
  const { key } = await createKey({ remote: false, persistTo }, DEV_USER);
  await mkdir(dirname(keyFile), { recursive: true });
  await writeFile(keyFile, `${key}\n`, { mode: 0o600 });
  await chmod(keyFile, 0o600);
  return key;
}

async function isActiveKey(key: string, persistTo?: string): Promise<boolean> {
  const [rows] = await execute({ remote: false, persistTo }, [{ sql: "SELECT 1 AS ok FROM api_keys WHERE hash = ? AND revoked_at IS NULL", params: [await hashToken(key)] }]);
  return (rows ?? []).length > 0;
}
