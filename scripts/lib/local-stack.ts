import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { unstable_startWorker } from "wrangler";
import { newKeyStatements } from "../../shared/accounts";

const run = promisify(execFile);
const quiet = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", CI: "1" };
const SIGNING_SECRET = "e2e-signing-secret";
const TRANSCODER_SECRET = "e2e-transcoder-secret";

export interface StackOptions {
  transcoders?: number;
  transcoderEnv?: Record<string, string>;
  edgeVars?: Record<string, string>;
  /** A tighter per-key rate limit than wrangler.toml's, for testing it without thousands of requests. */
  rateLimit?: { requests: number; periodSeconds: 10 | 60 };
  /** Another entry module in place of edge/index.ts (a benchmark's wrapper around it). */
  main?: string;
}

export interface Transcoder {
  url: string;
  process: ChildProcess;
  logs: string[];
}

/**
 * The real local stack for end-to-end tests and benchmarks: the Worker in workerd (local D1, R2, Queues, Durable Objects) and
 * Fastify transcoder processes, talking over HTTP exactly as in development.
 */
export class Stack {
  private constructor(
    readonly edgeUrl: string,
    readonly transcoders: Transcoder[],
    private worker: Awaited<ReturnType<typeof unstable_startWorker>>,
    private readonly workerOptions: Parameters<typeof unstable_startWorker>[0],
    private readonly transcoderEnv: Record<string, string>,
    private readonly persist: string,
    private readonly config: string,
  ) {}

  static async start(options: StackOptions = {}): Promise<Stack> {
    const persist = await mkdtemp(join(tmpdir(), "ffedge-e2e-"));
    const config = options.rateLimit || options.main ? await configCopy(persist, options) : "wrangler.toml";
    await run("node_modules/.bin/wrangler", ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persist, "--config", config], { env: quiet });
    const edgePort = await freePort();
    const edgeUrl = `http://127.0.0.1:${edgePort}`;
    const transcoders = await Promise.all(Array.from({ length: options.transcoders ?? 1 }, () => startTranscoder(edgeUrl, options.transcoderEnv ?? {})));
    const vars: Record<string, string> = {
      PUBLIC_URL: edgeUrl,
      CN_PUBLIC_URL: edgeUrl,
      EDGE_URL: edgeUrl,
      TRANSCODER_URL: transcoders.map((t) => t.url).join(","),
      SIGNING_SECRET,
      TRANSCODER_SECRET,
      DEV_FETCH_ALLOW_HOSTS: "127.0.0.1",
      ...(options.rateLimit ? { RATE_LIMIT_REQUESTS: String(options.rateLimit.requests), RATE_LIMIT_PERIOD_SECONDS: String(options.rateLimit.periodSeconds) } : {}),
      ...options.edgeVars,
    };
    const workerOptions: Parameters<typeof unstable_startWorker>[0] = {
      config,
      // Wrangler loses the config's nodejs_compat when bindings are overridden here; say it again.
      build: { nodejsCompatMode: "v2" },
      bindings: Object.fromEntries(Object.entries(vars).map(([name, value]) => [name, { type: "plain_text" as const, value }])),
      dev: { persist, server: { hostname: "127.0.0.1", port: edgePort }, inspector: false, logLevel: "warn", watch: false, enableContainers: false },
    };
    const worker = await unstable_startWorker(workerOptions);
    await worker.ready;
    return new Stack(edgeUrl, transcoders, worker, workerOptions, options.transcoderEnv ?? {}, persist, config);
  }

  /** A user with a key, created through the same statements as the key CLI. */
  async createUser(name = `e2e-${Math.random().toString(36).slice(2, 10)}`): Promise<{ key: string; userId: string }> {
    const { key, statements } = await newKeyStatements(name);
    const sql = statements.map((s) => s.sql.replace(/\?/g, () => literal(s.params.shift() ?? null))).join(";\n");
    await run("node_modules/.bin/wrangler", ["d1", "execute", "DB", "--local", "--persist-to", this.persist, "--config", this.config, "--command", sql], { env: quiet });
    const me = await (await this.fetch("/v1/me", { headers: { authorization: `Bearer ${key}` } })).json() as { user_id: string };
    return { key, userId: me.user_id };
  }

  fetch(path: string, init?: RequestInit): Promise<Response> {
    return fetch(`${this.edgeUrl}${path}`, init);
  }

  /** Stops workerd and starts it again on the same port and storage, as a crashed and restarted edge would. */
  async restartEdge(): Promise<void> {
    await this.worker.dispose();
    this.worker = await unstable_startWorker(this.workerOptions);
    await this.worker.ready;
  }

  /** SIGKILLs transcoder `index` and every process it started (its ffmpeg), as a crash would. */
  async killTranscoder(index = 0): Promise<void> {
    const transcoder = this.transcoders[index]!;
    const pids = await descendants(transcoder.process.pid!);
    transcoder.process.kill("SIGKILL");
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    if (transcoder.process.exitCode === null && transcoder.process.signalCode === null) await new Promise((resolve) => transcoder.process.once("exit", resolve));
  }

  /** Starts transcoder `index` again on its old port (after `killTranscoder`). */
  async restartTranscoder(index = 0): Promise<void> {
    const old = this.transcoders[index]!;
    this.transcoders[index] = await startTranscoder(this.edgeUrl, this.transcoderEnv, Number(new URL(old.url).port));
  }

  async stop(): Promise<void> {
    for (const transcoder of this.transcoders) transcoder.process.kill("SIGKILL");
    await this.worker.dispose();
    await rm(this.persist, { recursive: true, force: true });
  }
}

/**
 * The rate-limit binding's numbers and the entry module live only in the wrangler config, so
 * changing them needs a copy of it; paths in the copy are made absolute because it lives elsewhere.
 */
async function configCopy(dir: string, options: Pick<StackOptions, "rateLimit" | "main">): Promise<string> {
  const root = process.cwd();
  const limit = options.rateLimit;
  let text = (await readFile("wrangler.toml", "utf8"))
    .replace('main = "edge/index.ts"', `main = "${options.main ?? join(root, "edge/index.ts")}"`)
    .replaceAll('migrations_dir = "migrations"', `migrations_dir = "${join(root, "migrations")}"`)
    .replaceAll('image = "./transcoder/Dockerfile"', `image = "${join(root, "transcoder/Dockerfile")}"`)
    .replaceAll('image_build_context = "."', `image_build_context = "${root}"`);
  if (limit) text = text.replace(/simple = \{ limit = \d+, period = \d+ \}/, `simple = { limit = ${limit.requests}, period = ${limit.periodSeconds} }`);
  const path = join(dir, "wrangler.toml");
  await writeFile(path, text);
  return path;
}

function literal(value: string | null): string {
  return value === null ? "NULL" : `'${value.replaceAll("'", "''")}'`;
}

/** Every process below `pid`, children first found by `ps`. */
export async function descendants(pid: number): Promise<number[]> {
  const { stdout } = await run("ps", ["-e", "-o", "pid=,ppid="]);
  const children = new Map<number, number[]>();
  for (const line of stdout.trim().split("\n")) {
    const [child, parent] = line.trim().split(/\s+/).map(Number) as [number, number];
    children.set(parent, [...(children.get(parent) ?? []), child]);
  }
  const found: number[] = [];
  const visit = (parent: number) => {
    for (const child of children.get(parent) ?? []) {
      found.push(child);
      visit(child);
    }
  };
  visit(pid);
  return found;
}

export async function startTranscoder(edgeUrl: string, env: Record<string, string> = {}, port?: number): Promise<Transcoder> {
  port ??= await freePort();
  const child = spawn(process.execPath, ["--import", "tsx", "transcoder/server.ts"], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), HOST: "127.0.0.1", TRANSCODER_SECRET, DEV_FETCH_ALLOW_HOSTS: "127.0.0.1", EDGE_URL: edgeUrl, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: string[] = [];
  child.stdout!.on("data", (chunk: Buffer) => logs.push(chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => logs.push(chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`transcoder exited: ${logs.join("")}`);
    const healthy = await fetch(`${url}/health`).then((r) => r.ok, () => false);
    if (healthy) return { url, process: child, logs };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  child.kill("SIGKILL");
  throw new Error(`transcoder did not become healthy: ${logs.join("")}`);
}

export function authed(key: string, init: RequestInit = {}): RequestInit {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${key}`);
  return { ...init, headers };
}

export async function uploadLocalFile(stack: Pick<Stack, "fetch">, key: string, path: string, type = "video/mp4"): Promise<{ url: string; key: string; size: number }> {
  const form = new FormData();
  form.append("file", new Blob([await readFile(path)], { type }), basename(path));
  const response = await stack.fetch("/api/upload/file", authed(key, { method: "POST", body: form }));
  if (response.status !== 201) throw new Error(`upload failed: ${response.status} ${await response.text()}`);
  return response.json() as Promise<{ url: string; key: string; size: number }>;
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}
