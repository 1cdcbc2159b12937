import type { Command } from "commander";
import { FFedge, FFedgeError } from "../../../sdk/src/index";
import { checkedUrl, connect, type GlobalOptions } from "../client";
import { DEFAULT_URL, configPath, keyPrefix, readConfig, removeConfigKey, writeConfig } from "../config";
import { UsageError } from "../errors";
import { formatSeconds, note, printJson, printLine } from "../output";
import { readSecret } from "../prompt";

export function registerAccount(program: Command): void {
  program
    .command("login")
    .description("check an API key with the service and store it (and the URL) in your config file, mode 0600")
    .option("--key <key>", "the API key (else prompted for on a terminal, or read from stdin); a key in argv can land in shell history")
    .action(async (options: { key?: string }) => {
      const global = program.opts<GlobalOptions>();
      const stored = await readConfig();
      const url = checkedUrl(global.url ?? (process.env.FFEDGE_URL || undefined) ?? stored.url ?? DEFAULT_URL);
      const apiKey = (options.key ?? (await readSecret(`API key for ${url}: `))).trim();
      if (!apiKey) throw new UsageError("No API key", "give one with --key, at the prompt or on stdin (create one in the console or with `npm run keys -- create`)");
      const me = await new FFedge({ apiKey, baseUrl: url }).me().catch((error: unknown) => {
        if (error instanceof FFedgeError && error.code === "UNAUTHORIZED") throw new FFedgeError({ ...error.problem, detail: `${url} does not accept this key (mistyped or revoked?); nothing was saved` });
        throw error;
      });
      await writeConfig({ ...stored, url, api_key: apiKey });
      note(`Logged in to ${url} as ${me.name}${me.email ? ` <${me.email}>` : ""}; key ${keyPrefix(apiKey)} saved to ${configPath()}`);
      if (process.env.FFEDGE_API_KEY) note("FFEDGE_API_KEY is set in this shell and still takes precedence over the saved key.");
    });

  program
    .command("logout")
    .description("remove the stored API key from your config file (the key itself stays valid until revoked in the console)")
    .action(async () => {
      const removed = await removeConfigKey();
      note(removed ? `Removed the API key from ${configPath()}.` : `No API key was stored in ${configPath()}.`);
      if (process.env.FFEDGE_API_KEY) note("FFEDGE_API_KEY is still set in this shell.");
    });

  program
    .command("whoami")
    .description("show who the API key belongs to, and where the key comes from")
    .option("--json", "print the account (GET /v1/me) as JSON")
    .action(async (options: { json?: boolean }) => {
      const { ff, credentials } = await connect(program.opts<GlobalOptions>());
      const me = await ff.me();
      if (options.json) return printJson(me);
      const source = credentials.keySource === "config" ? configPath() : credentials.keySource;
      printLine(`${me.name}${me.email ? ` <${me.email}>` : ""} (${me.user_id}) on ${credentials.url}`);
      printLine(`key ${keyPrefix(credentials.apiKey!)} from ${source}`);
      printLine(`${formatSeconds(me.remaining_credits)} of processing left today; ${me.usage.running_tasks} running, ${me.usage.waiting_tasks} waiting`);
    });
}
