/**
 * API key administration for the operator: `npm run --silent keys -- <command>`.
 *
 *   create --user <name | address | id> [--email <address>]
 *                          give one user a fresh key, creating a user of that name if none
 *                          matches; prints ONLY the key. An address finds the user whose
 *                          address it is; a value matching two users is refused (name the
 *                          user by its id then). --email sets the user's address, so that the
 *                          console's password reset lets the user set a password
 *   list                   prefix, user, created, revoked of every key (never a key itself)
 *   revoke <prefix>        revoke the key with that display prefix
 *
 * Options: --remote targets the deployed D1 (`wrangler d1 execute DB --remote --env production`,
 * the binding `npm run deploy` ships; its migrations are applied by the deploy, not here). By default the local D1 that `wrangler dev` uses is
 * targeted, after applying its migrations; --persist-to <dir> points at another local state
 * directory (tests use a temporary one so they never touch the developer's .wrangler/).
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { type Statement, isValidUserName, newKeyStatements } from "../shared/accounts";
import { hashToken } from "../shared/token-hash";
import { EmailSchema } from "../shared/schemas/accounts";

export const ROOT = fileURLToPath(new URL("..", import.meta.url));
const WRANGLER = resolve(ROOT, "node_modules/.bin/wrangler");

/** Which D1 the CLI talks to. */
export type Target = { remote: true } | { remote: false; persistTo?: string };

export class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

const USAGE = `usage: npm run --silent keys -- <command> [--remote | --persist-to <dir>]
  create --user <name | address | id> [--email <address>]
                         a fresh key for that user (a new user of that name if none
                         matches); prints only the key. A value matching two users is
                         refused: name the user by its id then
                         (--email: the address the console's password reset mails to)
  list                   list keys: prefix, user, created, revoked
  revoke <prefix>        revoke the key with that prefix (e.g. ffe_AbCdEfGh)`;

/** SQL text with each `?` replaced by a quoted literal, for `wrangler d1 execute --command`. */
export function renderSql(statement: Statement): string {
  // A quote in the template could hide a `?` inside a literal; our statements never need one.
  if (statement.sql.includes("'")) throw new Error("SQL templates must not contain literals; pass them as parameters.");
  let index = 0;
  const sql = statement.sql.replace(/\?/g, () => {
    if (index >= statement.params.length) throw new Error("More placeholders than parameters.");
    return sqlLiteral(statement.params[index++] ?? null);
  });
  if (index !== statement.params.length) throw new Error("More parameters than placeholders.");
  return sql;
}

function sqlLiteral(value: string | null): string {
  if (value === null) return "NULL";
  if (value.includes("\0")) throw new CliError("Parameters must not contain NUL characters.");
  return `'${value.replaceAll("'", "''")}'`;
}

function wranglerEnv(): NodeJS.ProcessEnv {
  return { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
}

/**
 * wrangler's flags for `target`. The deployed Worker is `[env.production]` in wrangler.toml;
 * without `--env production` wrangler would address the top-level (local stack's) database.
 */
export function targetFlags(target: Target): string[] {
  if (target.remote) return ["--remote", "--env", "production"];
  return target.persistTo ? ["--local", "--persist-to", target.persistTo] : ["--local"];
}

/** Runs wrangler with its output captured; fails with wrangler's own words if it fails. */
function runWrangler(args: string[]): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(WRANGLER, args, { cwd: ROOT, env: wranglerEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", (error) => reject(new CliError(`Could not run wrangler: ${error.message}`)));
    child.on("close", (code) => {
      if (code === 0) resolvePromise(stdout);
      else reject(new CliError(`wrangler ${args.slice(0, 3).join(" ")} failed (exit ${code}):\n${(stderr || stdout).trim()}`));
    });
  });
}

/**
 * While the stack runs, workerd has the local database open and a write can meet SQLITE_BUSY;
 * the statement is tried again after a pause (wrangler's local D1 sets no busy timeout).
 */
const BUSY_ATTEMPTS = 6;
async function runWranglerWhenFree(args: string[]): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runWrangler(args);
    } catch (error) {
      if (attempt >= BUSY_ATTEMPTS || !/SQLITE_BUSY|database is locked/i.test((error as Error).message)) throw error;
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 100 * 2 ** attempt));
    }
  }
}

/** Applies the D1 migrations to a local database, printing nothing unless it fails. */
export async function applyLocalMigrations(persistTo?: string): Promise<void> {
  await runWranglerWhenFree(["d1", "migrations", "apply", "DB", ...targetFlags({ remote: false, persistTo })]);
}

type Row = Record<string, string | number | null>;

/** Executes statements in one `wrangler d1 execute`; returns the rows of each. */
export async function execute(target: Target, statements: Statement[]): Promise<Row[][]> {
  const command = statements.map(renderSql).join(";\n");
  const output = await runWranglerWhenFree(["d1", "execute", "DB", ...targetFlags(target), "--json", "--command", command]);
  const parsed = JSON.parse(output.slice(output.indexOf("["))) as { results: Row[]; success: boolean }[];
  return parsed.map((result) => result.results);
}

type UserMatch = { id: string; name: string; email: string | null };

/**
 * The one user `--user` names: by id, by name, or (for an address) by its address. A value that
 * matches two users, or a user merely named an address whose own address is another, is refused:
 * a key must never land on an account someone else registered under that address.
 */
function resolveUser(value: string, candidates: UserMatch[]): UserMatch | undefined {
  const address = value.includes("@") ? value.trim().toLowerCase() : undefined;
  const matches = candidates.filter((user) => user.id === value || user.name === value || (address !== undefined && user.email === address));
  const distinct = [...new Map(matches.map((user) => [user.id, user])).values()];
  if (distinct.length > 1) {
    const described = distinct.map((user) => `${user.id} (name '${user.name}', address ${user.email ?? "none"})`).join(", ");
    throw new CliError(`'${value}' matches more than one user: ${described}. Name the one you mean by its id: --user usr_….`);
  }
  const [user] = distinct;
  if (user && address !== undefined && user.email !== null && user.email !== address && user.id !== value) {
    throw new CliError(`'${value}' is only the name of user ${user.id}, whose address is ${user.email}. Use --user ${user.id} if that is the user you mean.`);
  }
  return user;
}

/** Users `value` or `email` could mean. A plain name (no address, not an id) can only mean the user of that name: no read needed. */
async function findUsers(target: Target, value: string, email?: string): Promise<UserMatch[]> {
  if (!value.includes("@") && !value.startsWith("usr_") && email === undefined) return [];
  const [rows] = await execute(target, [{
    sql: "SELECT id, name, email FROM users WHERE id = ? OR name = ? OR email = ? OR email = ?",
    params: [value, value, value.trim().toLowerCase(), email ?? null],
  }]);
  return (rows ?? []) as UserMatch[];
}

/**
 * A fresh key for the user `userName` names (see resolveUser), created under that name if none
 * matches; returns the key, shown only this once. A key turns a pending console sign-up into
 * an operator's account: that sign-up's password is dropped, and the owner sets one by reset.
 */
export async function createKey(target: Target, userName: string, email?: string): Promise<{ key: string; prefix: string; userId: string }> {
  const address = email?.trim().toLowerCase();
  const candidates = await findUsers(target, userName, address);
  const user = resolveUser(userName, candidates);
  const holder = address ? candidates.find((candidate) => candidate.email === address && candidate.id !== user?.id) : undefined;
  if (holder) throw new CliError(`${address} is already the address of user ${holder.id} (name '${holder.name}').`);
  const { key, prefix, statements } = await newKeyStatements(user ? user.name : userName, new Date(), address);
  const check = { sql: "SELECT user_id FROM api_keys WHERE hash = ?", params: [await hashToken(key)] };
  const dropSignup = { sql: "DELETE FROM mail_tokens WHERE user_id = (SELECT id FROM users WHERE name = ?) AND purpose = ?", params: [user ? user.name : userName, "verify"] };
  const dropPendingPassword = { sql: "UPDATE users SET pending_password_hash = NULL WHERE name = ?", params: [user ? user.name : userName] };
  const results = await execute(target, [...statements, dropSignup, dropPendingPassword, check]);
  const userId = results.at(-1)?.[0]?.user_id;
  if (typeof userId !== "string") throw new CliError(`The key for '${userName}' was not stored.`);
  return { key, prefix, userId };
}

export async function listKeys(target: Target): Promise<Row[]> {
  const [rows] = await execute(target, [{
    sql: "SELECT k.prefix AS prefix, u.name AS user, k.created_at AS created, k.revoked_at AS revoked FROM api_keys k JOIN users u ON u.id = k.user_id ORDER BY k.created_at, k.prefix",
    params: [],
  }]);
  return rows ?? [];
}

/** Revokes the key with `prefix`; revoking an already revoked key keeps its first revocation. */
export async function revokeKey(target: Target, prefix: string, now = new Date()): Promise<"revoked" | "already revoked"> {
  const [, rows] = await execute(target, [
    { sql: "UPDATE api_keys SET revoked_at = ? WHERE prefix = ? AND revoked_at IS NULL", params: [now.toISOString(), prefix] },
    { sql: "SELECT revoked_at FROM api_keys WHERE prefix = ?", params: [prefix] },
  ]);
  const row = rows?.[0];
  if (!row) throw new CliError(`No key has the prefix '${prefix}'. \`keys list\` shows the prefixes.`);
  return row.revoked_at === now.toISOString() ? "revoked" : "already revoked";
}

function formatTable(rows: Row[]): string {
  const columns = ["prefix", "user", "created", "revoked"];
  const cells = [columns.map((column) => column.toUpperCase()), ...rows.map((row) => columns.map((column) => String(row[column] ?? "-")))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  return cells.map((line) => line.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n");
}

function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: { user: { type: "string" }, email: { type: "string" }, remote: { type: "boolean", default: false }, "persist-to": { type: "string" }, help: { type: "boolean", short: "h" } },
    });
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n${USAGE}`, 2);
  }
}

type Command = { name: "create"; user: string; email?: string } | { name: "list" } | { name: "revoke"; prefix: string };

/** The command a command line asks for, checked before anything touches a database. */
function commandFrom(positionals: string[], user: string | undefined, email: string | undefined): Command {
  const [name, argument, ...rest] = positionals;
  if (rest.length > 0) throw new CliError(`Unexpected arguments: ${rest.join(" ")}\n${USAGE}`, 2);
  switch (name) {
    case "create":
      if (!user || argument) throw new CliError(`create needs --user <name>.\n${USAGE}`, 2);
      if (!isValidUserName(user)) throw new CliError(`'${user}' is not a valid user name (letters, digits and _.@+-, at most 64).`, 2);
      if (email === undefined) return { name, user };
      if (!EmailSchema.safeParse(email).success) throw new CliError(`'${email}' is not a valid email address.`, 2);
      return { name, user, email };
    case "list":
      if (argument) throw new CliError(`list takes no argument.\n${USAGE}`, 2);
      return { name };
    case "revoke":
      if (!argument) throw new CliError(`revoke needs the key's prefix.\n${USAGE}`, 2);
      return { name, prefix: argument };
    default:
      throw new CliError(`${name ? `Unknown command '${name}'.` : "No command given."}\n${USAGE}`, 2);
  }
}

async function run(target: Target, command: Command): Promise<void> {
  switch (command.name) {
    case "create": {
      const { key, prefix, userId } = await createKey(target, command.user, command.email);
      process.stderr.write(`Created key ${prefix}… for user '${command.user}' (${userId}). It is shown only once.\n`);
      process.stdout.write(`${key}\n`);
      return;
    }
    case "list":
      process.stdout.write(`${formatTable(await listKeys(target))}\n`);
      return;
    case "revoke":
      process.stderr.write(`${command.prefix}: ${await revokeKey(target, command.prefix)}\n`);
      return;
  }
}

export async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseCommandLine(argv);
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (values.remote && values["persist-to"]) throw new CliError("--remote and --persist-to exclude each other.", 2);
  const command = commandFrom(positionals, values.user, values.email);
  const target: Target = values.remote ? { remote: true } : { remote: false, persistTo: values["persist-to"] && resolve(values["persist-to"]) };
  if (!target.remote) await applyLocalMigrations(target.persistTo);
  await run(target, command);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((error: unknown) => {
    process.stderr.write(`keys: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(error instanceof CliError ? error.exitCode : 1);
  });
}
