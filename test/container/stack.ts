import { execFile } from "node:child_process";
import { createReadStream } from "node:fs";
import { mkdtemp, rm, stat } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { type ContainerEdge, RunContainers, imageOf, newBuildId, startContainerEdge } from "../../scripts/lib/containers";
import { newKeyStatements } from "../../shared/accounts";

const run = promisify(execFile);
export const TASK_TIMEOUT_SECONDS = 60;
const quiet = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", CI: "1" };

/**
 * The production topology on this machine: the Worker under `wrangler dev` with Containers on
 * (wrangler builds transcoder/Dockerfile through Docker), so every task runs in its own
 * TranscoderContainer whose traffic goes through the Worker's outbound handlers; and an input
 * origin the Worker reaches by this machine's own name (allow-listed for development, as the
 * policy refuses private hosts; inside the container every name resolves to the sidecar).
 */
export class ContainerStack {
  private constructor(
    readonly edgeUrl: string,
    readonly inputHost: string,
    /** The image wrangler built from transcoder/Dockerfile for this run. */
    readonly image: string,
    /** This run's containers and their sidecars, followed by their workerd session. */
    private readonly runContainers: RunContainers,
    private readonly origin: http.Server,
    private readonly worker: ContainerEdge,
    private readonly persist: string,
  ) {}

  /**
   * `files`: name → local file the input origin serves; `redirects`: name → where it redirects;
   * `vars`: settings over the defaults below (e.g. WARM_CONTAINERS, CONTAINER_MAX_INSTANCES).
   */
  static async start(files: Record<string, string>, redirects: Record<string, string> = {}, overrides: Record<string, string> = {}): Promise<ContainerStack> {
    const inputHost = await localName();
    const persist = await mkdtemp(path.join(os.tmpdir(), "ffedge-container-"));
    await run("node_modules/.bin/wrangler", ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persist], { env: quiet });
    const origin = await serve(files, redirects);
    const edgePort = await freePort();
    const edgeUrl = `http://127.0.0.1:${edgePort}`;
    const vars: Record<string, string> = {
      PUBLIC_URL: edgeUrl,
      CN_PUBLIC_URL: edgeUrl,
      EDGE_URL: edgeUrl,
      // No transcoder URL: the dispatcher starts one TranscoderContainer per task.
      TRANSCODER_URL: "",
      SIGNING_SECRET: "container-signing-secret",
      TRANSCODER_SECRET: "container-transcoder-secret",
      // The input origin by this machine's name, and the edge itself (own uploads, as `npm start` allows).
      DEV_FETCH_ALLOW_HOSTS: `${inputHost},127.0.0.1`,
      // Short enough to see a task time out, long enough for the other tasks under load.
      TASK_TIMEOUT_SECONDS: String(TASK_TIMEOUT_SECONDS),
      ...overrides,
    };
    const buildId = newBuildId();
    const worker = await startContainerEdge({
      root: process.cwd(), host: "127.0.0.1", port: edgePort, persist, vars, buildId,
      logLevel: process.env.FFEDGE_CONTAINER_LOG === "1" ? "log" : "warn",
    });
    return new ContainerStack(edgeUrl, inputHost, imageOf(buildId), new RunContainers(buildId), origin, worker, persist);
  }

  /** A URL of the input origin, as a user would write it in a command. */
  inputUrl(name: string): string {
    return `http://${this.inputHost}/${name}`;
  }

  async createUser(): Promise<string> {
    const { key, statements } = await newKeyStatements(`container-${Math.random().toString(36).slice(2, 10)}`);
    const sql = statements.map((s) => s.sql.replace(/\?/g, () => literal(s.params.shift() ?? null))).join(";\n");
    await run("node_modules/.bin/wrangler", ["d1", "execute", "DB", "--local", "--persist-to", this.persist, "--command", sql], { env: quiet });
    return key;
  }

  fetch(route: string, init?: RequestInit): Promise<Response> {
    return fetch(`${this.edgeUrl}${route}`, init);
  }

  /** Submits `command` as the user of `key`; the task's id. */
  async submit(key: string, command: string): Promise<string> {
    const response = await this.fetch("/v1/tasks", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ command }) });
    if (response.status !== 201) throw new Error(`POST /v1/tasks answered ${response.status}: ${await response.text()}`);
    return (await response.json() as { task_id: string }).task_id;
  }

  async task(key: string, id: string): Promise<ContainerTask> {
    return (await this.fetch(`/v1/tasks/${id}`, { headers: { authorization: `Bearer ${key}` } })).json() as Promise<ContainerTask>;
  }

  /**
   * This stack's running TranscoderContainers by id, and with `sidecars` their `…-proxy` egress
   * sidecars: this run's only (scripts/lib/containers.ts), so other stacks on this machine do not count.
   */
  async containers(options: { sidecars?: boolean } = {}): Promise<string[]> {
    const running = await this.runContainers.list({ running: true });
    return running.filter((container) => options.sidecars === true || !container.name.endsWith("-proxy")).map((container) => container.id);
  }

  /** Stops the Worker and removes what wrangler leaves running of this stack (its egress sidecars). */
  async stop(): Promise<void> {
    await this.worker.dispose();
    await this.runContainers.remove();
    await new Promise<void>((resolve) => {
      this.origin.closeAllConnections();
      this.origin.close(() => resolve());
    });
    await rm(this.persist, { recursive: true, force: true });
  }
}

/** A task as GET /v1/tasks/{id} shows it, the fields these tests read. */
export interface ContainerTask {
  task_id: string;
  status: string;
  progress: number;
  error?: string | null;
  error_code?: string | null;
  outputs?: { filename: string; url: string; size: number }[];
  retries?: number;
}

export const ended = (task: ContainerTask) => task.status === "completed" || task.status === "failed";

/** Polls until `done` holds; generous, as two busy cores build and start containers slowly. */
export async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

/** This machine's own name, which resolves here to a local address (the Worker fetches inputs by it). */
async function localName(): Promise<string> {
  const name = os.hostname().toLowerCase();
  const { address } = await import("node:dns/promises").then((dns) => dns.lookup(name));
  if (!address) throw new Error(`${name} does not resolve on this machine`);
  return name;
}

async function serve(files: Record<string, string>, redirects: Record<string, string>): Promise<http.Server> {
  const server = http.createServer(async (request, response) => {
    const name = (request.url ?? "/").slice(1);
    const location = redirects[name];
    if (location) return void response.writeHead(302, { location }).end();
    const file = files[name];
    if (!file) return void response.writeHead(404).end();
    response.writeHead(200, { "content-type": "video/mp4", "content-length": (await stat(file)).size });
    createReadStream(file).pipe(response);
  });
  // Port 80: a container without internet may open only ports 80 and 443, which the platform
  // intercepts; other ports are reset. https://developers.cloudflare.com/containers/platform-details/outbound-traffic/
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) => reject(new Error(`The input origin needs port 80 on 127.0.0.1 (run as root, with the port free): ${error.message}`)));
    server.listen(80, "127.0.0.1", resolve);
  });
  return server;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function literal(value: string | null): string {
  return value === null ? "NULL" : `'${value.replaceAll("'", "''")}'`;
}
