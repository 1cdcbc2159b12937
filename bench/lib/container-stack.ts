/**
 * The stack of `npm run start:containers` in this process, for `npm run bench -- tasks --containers`:
 * the same Worker with Containers (scripts/lib/containers.ts) on its own local state, a user with
 * a key, and the transcoders' logs read from Docker (each container's stdout, while it lives).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { ROOT, applyLocalMigrations, createKey } from "../../scripts/keys";
import { type ContainerEdge, RunContainers, imageOf, newBuildId, prepareDocker, startContainerEdge, untagRunImage } from "../../scripts/lib/containers";
import { freePort } from "../../scripts/lib/local-stack";

const run = promisify(execFile);

export interface ContainerBenchStack {
  edgeUrl: string;
  key: string;
  image: string;
  /** From the call to the edge answering, image build (or Docker's cache) included. */
  readyMs: number;
  /** `docker image inspect`'s size of the image wrangler built, in bytes. */
  imageBytes: number;
  /** False when the image was already in Docker (same id): wrangler only tagged it from the cache. */
  imageBuilt: boolean;
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Every line the run's transcoder containers wrote so far. */
  transcoderLines(): string[];
  stop(): Promise<void>;
}

export interface ContainerBenchOptions {
  /** Plain-text bindings over what start:containers passes (e.g. WARM_CONTAINERS, CONTAINER_MAX_INSTANCES). */
  vars?: Record<string, string>;
}

export async function startContainerBenchStack(options: ContainerBenchOptions = {}): Promise<ContainerBenchStack> {
  process.env.CLOUDFLARE_CF_FETCH_ENABLED = "false";
  process.env.WRANGLER_SEND_METRICS = "false";
  await prepareDocker(ROOT, (line) => process.stderr.write(`${line}\n`));
  const persist = await mkdtemp(join(tmpdir(), "ffedge-bench-containers-"));
  await applyLocalMigrations(persist);
  const { key } = await createKey({ remote: false, persistTo: persist }, "bench");
  const port = await freePort();
  const edgeUrl = `http://127.0.0.1:${port}`;
  const buildId = newBuildId();
  const containers = new RunContainers(buildId).start();
  const imagesBefore = new Set((await run("docker", ["images", "--quiet", "--no-trunc"])).stdout.split("\n").filter(Boolean));
  const started = performance.now();
  let edge: ContainerEdge;
  try {
    edge = await startContainerEdge({
      root: ROOT,
      host: "127.0.0.1",
      port,
      persist,
      buildId,
      logLevel: "warn",
      vars: {
        PUBLIC_URL: edgeUrl,
        CN_PUBLIC_URL: edgeUrl,
        EDGE_URL: edgeUrl,
        TRANSCODER_URL: "",
        SIGNING_SECRET: "bench-signing-secret",
        TRANSCODER_SECRET: "bench-transcoder-secret",
        DEV_FETCH_ALLOW_HOSTS: "127.0.0.1,localhost",
        MAX_RUNNING_TASKS_PER_USER: "100",
        WARM_CONTAINERS: "2",
        // The progress-latency row reads the transcoder's "ffmpeg progress" debug lines.
        TRANSCODER_LOG_LEVEL: "debug",
        ...options.vars,
      },
    });
  } catch (error) {
    await containers.remove();
    throw error;
  }
  const readyMs = performance.now() - started;
  const { stdout } = await run("docker", ["image", "inspect", imageOf(buildId), "--format", "{{.Size}} {{.Id}}"]);
  const [size, id] = stdout.trim().split(" ") as [string, string];
  const logs = new ContainerLogs(containers);
  return {
    edgeUrl,
    key,
    image: imageOf(buildId),
    readyMs,
    imageBytes: Number(size),
    imageBuilt: !imagesBefore.has(id),
    fetch: (path, init) => fetch(`${edgeUrl}${path}`, init),
    transcoderLines: () => logs.lines,
    stop: async () => {
      logs.stop();
      await edge.dispose();
      await containers.remove();
      await untagRunImage(buildId);
      await rm(persist, { recursive: true, force: true });
    },
  };
}

/** Follows `docker logs -f` of each app container of the run as it appears. */
class ContainerLogs {
  readonly lines: string[] = [];
  private readonly followers = new Map<string, ChildProcess>();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(private readonly containers: RunContainers) {
    this.timer = setInterval(() => void this.poll(), 250);
  }

  private async poll(): Promise<void> {
    const found = await this.containers.list().catch(() => []);
    for (const { id, name } of found) {
      if (name.endsWith("-proxy") || this.followers.has(id)) continue;
      const child = spawn("docker", ["logs", "-f", id], { stdio: ["ignore", "pipe", "pipe"] });
      this.followers.set(id, child);
      for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on("line", (line) => this.lines.push(line));
      child.on("error", () => undefined);
    }
  }

  stop(): void {
    clearInterval(this.timer);
    for (const child of this.followers.values()) child.kill();
  }
}
