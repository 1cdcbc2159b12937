import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdir, mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";

const exec = promisify(execFile);
export const ROOT = resolve(import.meta.dirname, "../../..");

export interface Installed {
  /** The `ffedge` that `npm install -g --prefix` put on the prefix's bin. */
  bin: string;
  prefix: string;
  tarball: string;
  /** PATH with the Node the CLI runs on first: the system's Node 20 when there is one. */
  path: string;
  nodeVersion: string;
}

/** The system's Node 20 (what a user without this repository has), else the one running the tests. */
async function userNode(): Promise<{ dir: string; version: string }> {
  const system = await exec("/usr/bin/node", ["--version"]).then(({ stdout }) => stdout.trim(), () => "");
  if (system.startsWith("v20.")) return { dir: "/usr/bin", version: system };
  return { dir: dirname(process.execPath), version: process.version };
}

/** Builds the bundle, packs clients/cli and installs the tarball globally into a fresh prefix, offline. */
export async function installPackedCli(): Promise<Installed> {
  const work = await mkdtemp(join(tmpdir(), "ffedge-cli-pack-"));
  await exec(process.execPath, [join(ROOT, "node_modules/tsx/dist/cli.mjs"), join(ROOT, "clients/cli/build.ts")], { cwd: ROOT });
  await exec("npm", ["pack", join(ROOT, "clients/cli"), "--pack-destination", work, "--silent"], { cwd: work });
  const tarball = join(work, (await readdir(work)).find((name) => name.endsWith(".tgz"))!);
  const prefix = join(work, "prefix");
  await mkdir(prefix);
  const node = await userNode();
  const path = `${node.dir}:${process.env.PATH}`;
  await exec("npm", ["install", "--global", "--prefix", prefix, "--offline", "--no-audit", "--no-fund", tarball], { cwd: work, env: { ...process.env, PATH: path } });
  return { bin: join(prefix, "bin/ffedge"), prefix, tarball, path, nodeVersion: node.version };
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  stdin?: string;
  /** Called with the child and each stderr chunk seen so far, e.g. to send it SIGINT at the right moment. */
  onStderr?: (child: ChildProcess, stderr: string) => void;
}

/** Runs the installed CLI with only the environment given (plus PATH and HOME), never the test runner's FFEDGE_*. */
export function runCli(installed: Installed, args: string[], options: CliOptions): Promise<CliResult> {
  const env = { PATH: installed.path, HOME: options.cwd, XDG_CONFIG_HOME: join(options.cwd, ".config"), ...options.env };
  return spawnCollect(installed.bin, args, options, env);
}

export function spawnCollect(file: string, args: string[], options: CliOptions, env: Record<string, string | undefined>): Promise<CliResult> {
  return new Promise((done, fail) => {
    const child = spawn(file, args, { cwd: options.cwd, env: Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)), stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      options.onStderr?.(child, stderr);
    });
    child.stdin!.end(options.stdin ?? "");
    child.once("error", fail);
    child.once("close", (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

/** The lines of stderr that report an error (progress lines are not errors). */
export function errorLines(stderr: string): string[] {
  return stderr.split("\n").filter((line) => line.startsWith("ffedge:"));
}

export function hasStackTrace(text: string): boolean {
  return /^\s+at .+:\d+:\d+\)?$/m.test(text);
}
