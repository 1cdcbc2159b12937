/**
 * The production topology on this machine: the Worker under `wrangler dev` with Containers on,
 * so that every task runs in its own TranscoderContainer (built by wrangler from
 * transcoder/Dockerfile through Docker) whose traffic goes through the Worker's outbound
 * handlers. Used by `npm run start:containers` (scripts/start.ts) and the container rows of
 * `npm run bench -- tasks --containers`.
 * https://developers.cloudflare.com/containers/local-dev/
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { unstable_startWorker } from "wrangler";

const run = promisify(execFile);
/** The Durable Object class that wrangler.toml's `[[containers]]` backs with a container. */
const CONTAINER_CLASS = "TranscoderContainer";

export interface ContainerEdgeOptions {
  root: string;
  host: string;
  port: number;
  /** Local state (D1, R2, Durable Objects); wrangler dev's default is `<root>/.wrangler/state`. */
  persist: string;
  /** Plain-text bindings over wrangler.toml's [vars] (and .dev.vars). */
  vars: Record<string, string>;
  /** Names this run's image, `cloudflare-dev/transcodercontainer:<buildId>` (see `imageOf`). */
  buildId: string;
  logLevel?: "log" | "warn" | "info" | "debug" | "error";
}

export type ContainerEdge = Awaited<ReturnType<typeof unstable_startWorker>>;

/** A fresh build id: every run builds (or, from Docker's cache, tags) its own image, which names its containers. */
export function newBuildId(): string {
  return randomBytes(6).toString("hex");
}

/** The image wrangler builds from transcoder/Dockerfile for build `buildId` (wrangler's getDevContainerImageName). */
export function imageOf(buildId: string): string {
  return `cloudflare-dev/${CONTAINER_CLASS.toLowerCase()}:${buildId}`;
}

/**
 * The Worker with Containers enabled: wrangler builds the image, and the Durable Objects start
 * containers from it. `TRANSCODER_URL` empty makes the dispatcher use one container per task.
 */
export async function startContainerEdge(options: ContainerEdgeOptions): Promise<ContainerEdge> {
  const worker = await unstable_startWorker({
    config: join(options.root, "wrangler.toml"),
    // The API, unlike `wrangler dev`, does not derive this from compatibility_flags when
    // bindings are given; "v2" is what nodejs_compat means at our compatibility date.
    build: { nodejsCompatMode: "v2" },
    bindings: Object.fromEntries(Object.entries(options.vars).map(([name, value]) => [name, { type: "plain_text" as const, value }])),
    dev: {
      persist: options.persist,
      server: { hostname: options.host, port: options.port },
      inspector: false,
      logLevel: options.logLevel ?? "log",
      watch: false,
      enableContainers: true,
      containerBuildId: options.buildId,
      // On a machine prepared by ../shared/containers/setup.sh, a docker that accepts wrangler's buildx flags.
      ...(process.env.WRANGLER_DOCKER_BIN ? { dockerPath: process.env.WRANGLER_DOCKER_BIN } : {}),
    },
  });
  await worker.ready;
  // The Worker may answer before wrangler has built (or tagged from Docker's cache) the image;
  // a task submitted then would wait for the build. Ready means both.
  for (const deadline = Date.now() + IMAGE_TIMEOUT_MS; !(await imageExists(imageOf(options.buildId)));) {
    if (Date.now() > deadline) {
      await worker.dispose();
      throw new Error(`wrangler did not build ${imageOf(options.buildId)} within ${IMAGE_TIMEOUT_MS / 60_000} minutes.`);
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return worker;
}

/** Building the image from nothing takes minutes on a slow machine. */
const IMAGE_TIMEOUT_MS = 900_000;

export function imageExists(image: string): Promise<boolean> {
  return run("docker", ["image", "inspect", image]).then(() => true, () => false);
}

/**
 * Removes this run's image tag when another tag names the same image (an earlier run's, built
 * from the same sources): each start tags the image anew, and the tags would pile up. The last
 * tag of an image is kept, so that its layers stay in Docker's cache for the next start.
 */
export async function untagRunImage(buildId: string): Promise<void> {
  const { stdout } = await run("docker", ["images", "--no-trunc", "--format", "{{.ID}} {{.Repository}}:{{.Tag}}"]).catch(() => ({ stdout: "" }));
  const images = stdout.split("\n").filter(Boolean).map((line) => line.split(" ") as [string, string]);
  const id = images.find(([, tag]) => tag === imageOf(buildId))?.[0];
  if (id && images.some(([other, tag]) => other === id && tag !== imageOf(buildId))) await run("docker", ["image", "rm", imageOf(buildId)]).catch(() => undefined);
}

export interface RunContainer {
  id: string;
  name: string;
}

export interface ListOptions {
  /** Only the containers running now (default: stopped ones too, as a clean-up must remove them). */
  running?: boolean;
}

/**
 * Every container of this run, running or not: the TranscoderContainers started from its image
 * and each one's `<name>-proxy` sidecar (workerd starts it from the egress image beside the app
 * container, and `wrangler dev` leaves it behind on exit). workerd labels both with its session,
 * `dev.workerd.session` (also the `workerd-<session>-` of their names); `sessions` are those
 * seen on this run's app containers so far, so that a sidecar is still found after its app
 * container is gone. Matched by image name, not `ancestor=` (which matches by image id, shared
 * by every run built from the same Dockerfile).
 */
export async function containersOfRun(buildId: string, sessions: Set<string> = new Set(), options: ListOptions = {}): Promise<RunContainer[]> {
  const all = await dockerPs(options.running === true);
  for (const container of all) if (container.session && container.image === imageOf(buildId)) sessions.add(container.session);
  return all.filter((container) => container.image === imageOf(buildId) || sessions.has(container.session));
}

const SESSION_LABEL = "dev.workerd.session";

/** Docker's containers (running or, unless `runningOnly`, not) with their name, image and workerd session. */
async function dockerPs(runningOnly: boolean): Promise<(RunContainer & { image: string; session: string })[]> {
  const { stdout } = await run("docker", ["ps", ...(runningOnly ? [] : ["-a"]), "--no-trunc", "--format", `{{.ID}}\t{{.Names}}\t{{.Image}}\t{{.Label "${SESSION_LABEL}"}}`]);
  return stdout.split("\n").filter(Boolean).map((line) => {
    const [id, name, image, session] = line.split("\t") as [string, string, string, string?];
    return { id, name, image, session: session ?? "" };
  });
}

/**
 * Follows this run's containers while it runs (their workerd session, so that a sidecar whose
 * app container is gone is still known to be ours) and removes them, and the session's volumes,
 * on `remove()`.
 */
export class RunContainers {
  private readonly sessions = new Set<string>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(readonly buildId: string, private readonly everyMs = 1_000) {}

  start(): this {
    this.timer = setInterval(() => void this.list().catch(() => undefined), this.everyMs);
    this.timer.unref();
    return this;
  }

  list(options: ListOptions = {}): Promise<RunContainer[]> {
    return containersOfRun(this.buildId, this.sessions, options);
  }

  /** `docker rm -f` of every container of this run, then its sessions' volumes; returns how many containers there were. */
  async remove(): Promise<number> {
    clearInterval(this.timer);
    const found = await this.list();
    if (found.length > 0) await run("docker", ["rm", "-f", ...found.map((container) => container.id)]).catch(() => undefined);
    for (const session of this.sessions) {
      const { stdout } = await run("docker", ["volume", "ls", "--quiet", "--filter", `label=${SESSION_LABEL}=${session}`]).catch(() => ({ stdout: "" }));
      const volumes = stdout.split("\n").filter(Boolean);
      if (volumes.length > 0) await run("docker", ["volume", "rm", ...volumes]).catch(() => undefined);
    }
    return found.length;
  }
}

/**
 * Makes sure Docker can run Containers under `wrangler dev`, as scripts/test-container.sh does:
 * an engine that answers is used as is (wrangler pulls what it needs); on a machine prepared by
 * the team's set-up script (no registry but Debian's and npm's), the script runs when we are root
 * and Docker or the egress sidecar image is not ready, and its exports are applied to this process.
 * Throws one clear message otherwise.
 */
export async function prepareDocker(root: string, log: (line: string) => void): Promise<void> {
  const setup = process.env.FFEDGE_CONTAINERS_SETUP ?? join(root, "../shared/containers/setup.sh");
  const dockerReady = await run("docker", ["info"]).then(() => true, () => false);
  if (existsSync(setup) && (!dockerReady || !process.env.MINIFLARE_CONTAINER_EGRESS_IMAGE)) {
    if (process.getuid?.() !== 0) {
      throw new Error(`Docker is not ready for Containers on this machine, and preparing it (${setup} --wrangler-dev) needs root: run this as root, or first, as root, eval "$(bash ${setup} --wrangler-dev)" and run it again from that shell.`);
    }
    log(`[start] preparing Docker with ${setup} --wrangler-dev`);
    const { stdout } = await runShowingProgress("bash", [setup, "--wrangler-dev"], root);
    for (const line of stdout.split("\n")) {
      const match = /^export ([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line.trim());
      if (match) process.env[match[1]!] = match[2]!.replace(/^(['"])(.*)\1$/, "$2");
    }
    return;
  }
  if (!dockerReady) {
    throw new Error("Docker is not running (or this user may not use it): start the Docker engine (https://docs.docker.com/engine/install/), then run this again.");
  }
}

/** Runs a command, its stderr (progress) passed through, its stdout returned. */
function runShowingProgress(command: string, args: string[], cwd: string): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { cwd, maxBuffer: 1 << 20 }, (error, stdout) => (error ? reject(new Error(`${command} ${args.join(" ")} failed: ${error.message}`)) : resolve({ stdout })));
    child.stderr?.pipe(process.stderr);
  });
}
