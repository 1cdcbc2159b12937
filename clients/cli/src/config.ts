import { chmod, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { UsageError } from "./errors";

export const DEFAULT_URL = "http://localhost:8787";

export interface StoredConfig {
  url?: string;
  api_key?: string;
}

export interface Credentials {
  url: string;
  apiKey: string | undefined;
  /** Where the key came from, for whoami. */
  keySource: "FFEDGE_API_KEY" | "config" | "none";
}

/** `$XDG_CONFIG_HOME/ffedge/config.json`, else `~/.config/ffedge/config.json` (the XDG base directory default). */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME.startsWith("/") ? env.XDG_CONFIG_HOME : join(homedir(), ".config");
  return join(base, "ffedge", "config.json");
}

export async function readConfig(path = configPath()): Promise<StoredConfig> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new UsageError("Config unreadable", `${path}: ${(error as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not a JSON object");
    const { url, api_key } = parsed as Record<string, unknown>;
    return { ...(typeof url === "string" ? { url } : {}), ...(typeof api_key === "string" ? { api_key } : {}) };
  } catch (error) {
    throw new UsageError("Config invalid", `${path} is not valid JSON (${(error as Error).message}); run \`ffedge login\` again or delete it`);
  }
}

/**
 * Written to a temporary file created with mode 0600 and renamed over the old one, so the key is
 * never readable by others, not even for a moment, and a crash mid-write leaves the old file.
 */
export async function writeConfig(config: StoredConfig, path = configPath()): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await chmod(dirname(path), 0o700);
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temporary, 0o600);
  await rename(temporary, path);
}

export async function removeConfigKey(path = configPath()): Promise<boolean> {
  const config = await readConfig(path);
  if (!config.api_key) return false;
  const { api_key: _removed, ...rest } = config;
  if (Object.keys(rest).length === 0) await rm(path, { force: true });
  else await writeConfig(rest, path);
  return true;
}

/** `--url`, then the environment, then the config file, then the local default. */
export async function credentials(options: { url?: string }, env: NodeJS.ProcessEnv = process.env): Promise<Credentials> {
  const stored = await readConfig(configPath(env));
  const url = options.url ?? (env.FFEDGE_URL || undefined) ?? stored.url ?? DEFAULT_URL;
  if (env.FFEDGE_API_KEY) return { url, apiKey: env.FFEDGE_API_KEY, keySource: "FFEDGE_API_KEY" };
  if (stored.api_key) return { url, apiKey: stored.api_key, keySource: "config" };
  return { url, apiKey: undefined, keySource: "none" };
}

/** What may be shown of a key: its 12-character display prefix, as the console and key CLI show it. */
export function keyPrefix(key: string): string {
  return `${key.slice(0, 12)}…`;
}
