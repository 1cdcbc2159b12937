/**
 * `npm start`: the whole local stack from a fresh checkout. `npm run start:containers`
 * (`--containers`): the same stack in the production topology, see `startContainers`.
 *
 * 1. `.dev.vars` gets random SIGNING_SECRET / TRANSCODER_SECRET if it lacks them (existing
 *    values are kept).
 * 2. The local D1 is migrated and a development user `dev` gets a key, kept in
 *    `.wrangler/dev-api-key` so later starts print the same key (FFEDGE_PERSIST_TO: other state).
 * 3. `wrangler dev` (port 8787, or FFEDGE_EDGE_PORT) and the transcoder (port 8788, or
 *    FFEDGE_TRANSCODER_PORT) run with prefixed logs (wrangler's without our own polling:
 *    scripts/lib/wrangler-log.ts), each supervised: one that exits or stops
 *    answering (a killed workerd leaves wrangler running) is started again, and the log says so.
 *    A port another program holds stops the start with one line. The transcoder is told a random
 *    identity it echoes on `/health`, so another program answering on its port is never taken for it.
 * 4. Once the edge answers, the key and ready-to-paste curl commands are printed.
 *
 * SIGINT, SIGTERM or SIGHUP (or npm, our parent, going away) stops both process groups; if this
 * process is killed outright, each service's watchdog kills its group (scripts/lib/supervisor.ts).
 * Either way no wrangler, workerd, transcoder or ffmpeg outlives it.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ROOT, applyLocalMigrations } from "./keys";
import { type ContainerEdgeOptions, RunContainers, imageExists, imageOf, newBuildId, prepareDocker, startContainerEdge, untagRunImage } from "./lib/containers";
import { OUTBOX_PATH, watchOutbox } from "./lib/dev-outbox";
import { DEV_USER, ensureDevKey, ensureDevVars } from "./lib/dev-state";
import { Supervisor } from "./lib/supervisor";
import { EDGE_HEALTH_PATH, wranglerLogFilter } from "./lib/wrangler-log";

const DEFAULT_EDGE_PORT = 8787;
const DEFAULT_TRANSCODER_PORT = 8788;
const EDGE_PORT = port("FFEDGE_EDGE_PORT", DEFAULT_EDGE_PORT);
const TRANSCODER_PORT = port("FFEDGE_TRANSCODER_PORT", DEFAULT_TRANSCODER_PORT);
const EDGE_URL = `http://localhost:${EDGE_PORT}`;
const READY_TIMEOUT_MS = 120_000;
/** Building the transcoder image from nothing takes minutes on a slow machine. */
const CONTAINERS_READY_TIMEOUT_MS = 900_000;
const HEALTH_TIMEOUT_MS = 5_000;
/** A service is restarted after 20 s without an answer: long enough for a busy machine. */
const SUPERVISION = { checkEveryMs: 5_000, maxFailedChecks: 4 };
const PARENT_CHECK_MS = 1_000;
const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

function port(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 65_535) throw new Error(`${name} must be a port number (1-65535), not '${raw}'.`);
  return value;
}

/** True when `url` answers at all below 500 within a few seconds. */
async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    await response.body?.cancel();
    return response.status < 500;
  } catch {
    return false;
  }
}

/**
 * True when the transcoder on `url` is the one started with `instance`: its `/health` echoes it.
 * A 503 (draining, work directory full) is still our transcoder alive, not one to restart.
 */
async function isOurTranscoder(url: string, instance: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    const body: unknown = await response.json();
    return typeof body === "object" && body !== null && (body as { instance?: unknown }).instance === instance;
  } catch {
    return false;
  }
}

/** True when nothing listens on `port` on any local address (the services bind 127.0.0.1, others may bind all). */
async function portIsFree(port: number): Promise<boolean> {
  for (const host of ["127.0.0.1", "::"]) {
    const server = createServer();
    const free = await new Promise<boolean>((resolvePromise) => {
      server.once("error", (error: NodeJS.ErrnoException) => resolvePromise(error.code === "EAFNOSUPPORT" || error.code === "EADDRNOTAVAIL"));
      server.listen({ port, host, exclusive: true }, () => resolvePromise(true));
    });
    if (server.listening) await new Promise((resolvePromise) => server.close(resolvePromise));
    if (!free) return false;
  }
  return true;
}

/**
 * wrangler.toml's development URLs name the default ports: on others they follow the ports in use
 * (on the defaults nothing is passed, so `.dev.vars` may still set them).
 */
function urlVars(transcoderUrl: string): string[] {
  if (EDGE_PORT === DEFAULT_EDGE_PORT && TRANSCODER_PORT === DEFAULT_TRANSCODER_PORT) return [];
  const vars = { PUBLIC_URL: EDGE_URL, CN_PUBLIC_URL: `http://127.0.0.1:${EDGE_PORT}`, EDGE_URL: `http://127.0.0.1:${EDGE_PORT}`, TRANSCODER_URL: transcoderUrl };
  return Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]);
}

/** Throws one clear line for the first port another program holds. */
async function checkPortsFree(ports: Record<string, number>): Promise<void> {
  for (const [label, number] of Object.entries(ports)) {
    if (!(await portIsFree(number))) {
      throw new Error(`port ${number} (${label}) is already in use by another program, maybe an ffedge left from an earlier start: stop it, or choose another port with FFEDGE_${label.toUpperCase()}_PORT.`);
    }
  }
}

/**
 * Polls the edge until the Worker itself answers, or `isStopped`. The health path leaves no line
 * in the log; the key was already checked against the same local D1 by `ensureDevKey`.
 */
async function waitForEdge(isStopped: () => boolean, timeoutMs = READY_TIMEOUT_MS): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !isStopped()) {
    if (await answers(`http://127.0.0.1:${EDGE_PORT}${EDGE_HEALTH_PATH}`)) return true;
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 250));
  }
  return false;
}

/** The README's test clip (test/e2e/readme.test.ts checks they agree); yuv420p so that browsers and QuickTime play it. */
export const TEST_CLIP_COMMAND = "ffmpeg -f lavfi -i testsrc=size=640x360:rate=25:duration=5 -f lavfi -i sine=duration=5 -c:v libx264 -pix_fmt yuv420p -c:a aac -shortest clip.mp4";

function banner(key: string, transcoder = `http://127.0.0.1:${TRANSCODER_PORT}`): string {
  const auth = `-H "Authorization: Bearer ${key}"`;
  const json = `-H "Content-Type: application/json"`;
  return [
    "",
    "ffedge is running.",
    `  API key (user '${DEV_USER}'): ${key}`,
    `  Console:    ${EDGE_URL}/console  (sign up there; the verification mail is printed below)`,
    `  Edge:       ${EDGE_URL}  (OpenAPI: ${EDGE_URL}/openapi.json)`,
    `  Transcoder: ${transcoder}`,
    "",
    `Try it (a test clip: ${TEST_CLIP_COMMAND}):`,
    `  curl ${auth} -F file=@clip.mp4 ${EDGE_URL}/api/upload/file`,
    `  curl ${auth} ${json} -d '{"data":"data:text/plain;base64,aGVsbG8gZmZlZGdl"}' ${EDGE_URL}/api/upload/base64`,
    `  curl ${auth} ${json} -d '{"url":"<the url of an upload above>"}' ${EDGE_URL}/api/upload/url`,
    "  curl -O <the url of an upload>     # the CDN download",
    `  curl ${auth} ${json} -d '{"command":"ffmpeg -i <the url of clip.mp4> -vf scale=320:-2 small.mp4"}' ${EDGE_URL}/v1/tasks`,
    `  curl ${auth} ${EDGE_URL}/v1/tasks/<task_id>            # status, progress, outputs`,
    `  curl -N ${auth} ${EDGE_URL}/v1/tasks/<task_id>/events  # live progress`,
    "",
    `Cron does not fire locally; the sweep of expired files runs on: curl ${EDGE_URL}/cdn-cgi/local/scheduled`,
    "",
    "Ctrl-C stops everything.",
    "",
  ].join("\n");
}

export async function main(): Promise<void> {
  await checkPortsFree({ edge: EDGE_PORT, transcoder: TRANSCODER_PORT });
  const vars = await ensureDevVars(join(ROOT, ".dev.vars"));
  const persistTo = persistDirectory();
  await applyLocalMigrations(persistTo);
  const key = await ensureDevKey(join(persistTo ?? join(ROOT, ".wrangler"), "dev-api-key"), persistTo);

  const transcoderUrl = `http://127.0.0.1:${TRANSCODER_PORT}`;
  const transcoderInstance = randomBytes(16).toString("hex");
  const quietWrangler = { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false" };
  const services = [
    // The edge may fetch its own CDN URLs (URL uploads, task inputs) on 127.0.0.1 in development.
    new Supervisor({
      label: "edge",
      command: join(ROOT, "node_modules/.bin/wrangler"),
      args: ["dev", "--port", String(EDGE_PORT), "--ip", "127.0.0.1", "--show-interactive-dev-session=false", "--var", "DEV_FETCH_ALLOW_HOSTS:127.0.0.1,localhost", ...urlVars(transcoderUrl), ...(persistTo ? ["--persist-to", persistTo] : [])],
      env: quietWrangler,
      cwd: ROOT,
      healthy: () => answers(`http://127.0.0.1:${EDGE_PORT}${EDGE_HEALTH_PATH}`),
      output: wranglerLogFilter({ ownPaths: [EDGE_HEALTH_PATH, OUTBOX_PATH], showContainers: false }),
    }, SUPERVISION),
    new Supervisor({
      label: "transcoder",
      command: process.execPath,
      args: ["--import", "tsx", "transcoder/server.ts"],
      env: {
        ...process.env,
        PORT: String(TRANSCODER_PORT),
        TRANSCODER_SECRET: vars.TRANSCODER_SECRET,
        TRANSCODER_INSTANCE: transcoderInstance,
        DEV_FETCH_ALLOW_HOSTS: "127.0.0.1,localhost",
        // Ctrl-C should not wait two minutes for a running job in development.
        SHUTDOWN_GRACE_SECONDS: "5",
      },
      cwd: ROOT,
      healthy: () => isOurTranscoder(transcoderUrl, transcoderInstance),
    }, SUPERVISION),
  ];
  for (const service of services) service.start();

  let stopping = false;
  const stopAll = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    await Promise.all(services.map((service) => service.stop()));
    process.exit(exitCode);
  };
  stopWhenAsked(() => void stopAll(0));

  if (await waitForEdge(() => stopping)) {
    process.stdout.write(banner(key));
    void watchOutbox(`http://127.0.0.1:${EDGE_PORT}`, () => stopping);
  }
  else if (!stopping) {
    process.stderr.write(`[start] the edge did not answer on port ${EDGE_PORT} within ${READY_TIMEOUT_MS / 1000} s.\n`);
    await stopAll(1);
  }
}

/** FFEDGE_PERSIST_TO: separate local state (tests that run beside a developer's `npm start`). */
function persistDirectory(): string | undefined {
  return process.env.FFEDGE_PERSIST_TO ? resolve(process.env.FFEDGE_PERSIST_TO) : undefined;
}

/** Warm, never-used containers the dispatcher keeps ready, so that a task does not wait for a cold start. */
const WARM_CONTAINERS = "2";

/**
 * `npm run start:containers`: the stack in the production topology. No transcoder process: the
 * Worker runs with Containers on, `TRANSCODER_URL` empty, so the dispatcher starts one
 * TranscoderContainer per task, which reaches the edge (reports, outputs) and its inputs only
 * through the Worker's outbound handlers: the edge needs no address a container could reach,
 * and listens on 127.0.0.1 as `npm start` does.
 * https://developers.cloudflare.com/containers/platform-details/outbound-traffic/
 *
 * Docker is prepared first (scripts/lib/containers.ts). The image is built by wrangler under a
 * build id of this run, which names its containers; on stop, once the edge is disposed of, every
 * container of this run still there (wrangler leaves the `…-proxy` sidecars) is removed, and no
 * other run's.
 */
export async function startContainers(): Promise<void> {
  const startedAt = performance.now();
  await checkPortsFree({ edge: EDGE_PORT });
  await prepareDocker(ROOT, (line) => process.stderr.write(`${line}\n`));
  // wrangler reads .dev.vars itself (secrets never go on a command line or into its binding table).
  await ensureDevVars(join(ROOT, ".dev.vars"));
  const persistTo = persistDirectory();
  await applyLocalMigrations(persistTo);
  const key = await ensureDevKey(join(persistTo ?? join(ROOT, ".wrangler"), "dev-api-key"), persistTo);

  const buildId = newBuildId();
  const containers = new RunContainers(buildId).start();
  const vars: Record<string, string> = {
    PUBLIC_URL: EDGE_URL,
    CN_PUBLIC_URL: `http://127.0.0.1:${EDGE_PORT}`,
    EDGE_URL: `http://127.0.0.1:${EDGE_PORT}`,
    TRANSCODER_URL: "",
    DEV_FETCH_ALLOW_HOSTS: "127.0.0.1,localhost",
    WARM_CONTAINERS,
    // A small limit, to see tasks wait for a free container (CONTAINER_MAX_INSTANCES=2 npm run start:containers).
    ...(process.env.CONTAINER_MAX_INSTANCES ? { CONTAINER_MAX_INSTANCES: process.env.CONTAINER_MAX_INSTANCES } : {}),
  };
  const edgeOptions: ContainerEdgeOptions = { root: ROOT, host: "127.0.0.1", port: EDGE_PORT, persist: persistTo ?? join(ROOT, ".wrangler", "state"), vars, buildId };
  const edge = new Supervisor({
    label: "edge",
    command: process.execPath,
    args: ["--import", "tsx", fileURLToPath(import.meta.url), "--container-edge"],
    env: { ...process.env, CLOUDFLARE_CF_FETCH_ENABLED: "false", WRANGLER_SEND_METRICS: "false", FFEDGE_CONTAINER_EDGE: JSON.stringify(edgeOptions) },
    cwd: ROOT,
    healthy: () => answers(`http://127.0.0.1:${EDGE_PORT}${EDGE_HEALTH_PATH}`),
    output: wranglerLogFilter({ ownPaths: [EDGE_HEALTH_PATH, OUTBOX_PATH], showContainers: true }),
  }, SUPERVISION);
  edge.start();

  let stopping = false;
  const stopAll = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    await edge.stop();
    const removed = await containers.remove().catch((error: unknown) => {
      process.stderr.write(`[start] could not list this run's containers: ${error instanceof Error ? error.message : String(error)}\n`);
      return 0;
    });
    if (removed > 0) process.stderr.write(`[start] removed ${removed} container(s) of this run (image ${imageOf(buildId)}).\n`);
    await untagRunImage(buildId);
    process.exit(exitCode);
  };
  stopWhenAsked(() => void stopAll(0));

  // The first start builds the image (a minute or more); later ones take it from Docker's cache.
  // The Worker may answer before wrangler has tagged the image: ready means both.
  const ready = async () => {
    if (!(await waitForEdge(() => stopping, CONTAINERS_READY_TIMEOUT_MS))) return false;
    const deadline = startedAt + CONTAINERS_READY_TIMEOUT_MS;
    while (!stopping && !(await imageExists(imageOf(buildId)))) {
      if (performance.now() > deadline) return false;
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 500));
    }
    return !stopping;
  };
  if (await ready()) {
    process.stdout.write(banner(key, `one TranscoderContainer per task (image ${imageOf(buildId)}, ${WARM_CONTAINERS} kept warm)`));
    process.stdout.write(`[start] ready in ${((performance.now() - startedAt) / 1000).toFixed(1)} s.\n`);
    void watchOutbox(`http://127.0.0.1:${EDGE_PORT}`, () => stopping);
  }
  else if (!stopping) {
    process.stderr.write(`[start] the edge did not answer on port ${EDGE_PORT} with its image ${imageOf(buildId)} built within ${CONTAINERS_READY_TIMEOUT_MS / 1000} s.\n`);
    await stopAll(1);
  }
}

/**
 * `--container-edge`: the edge of `start:containers` as a process of its own, so that it is
 * supervised like `npm start`'s `wrangler dev` (its options in FFEDGE_CONTAINER_EDGE, JSON).
 * SIGTERM or SIGINT disposes of it, which stops the containers workerd started.
 */
async function runContainerEdge(): Promise<void> {
  const options = JSON.parse(process.env.FFEDGE_CONTAINER_EDGE ?? "null") as ContainerEdgeOptions | null;
  if (!options) throw new Error("FFEDGE_CONTAINER_EDGE is not set: run `npm run start:containers`.");
  const edge = startContainerEdge(options);
  let disposing: Promise<void> | undefined;
  for (const signal of STOP_SIGNALS) {
    // Still building the image: nothing to dispose of yet, the build dies with the process group.
    process.on(signal, () => {
      disposing ??= edge.then((worker) => worker.dispose()).catch(() => undefined).finally(() => process.exit(0));
    });
  }
  await edge;
}

/** Stops on Ctrl-C or SIGTERM, and when npm dies of anything else (it forwards SIGINT and SIGTERM only) and this process is reparented. */
function stopWhenAsked(stop: () => void): void {
  for (const signal of STOP_SIGNALS) process.on(signal, stop);
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop();
  }, PARENT_CHECK_MS).unref();
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const mode = process.argv.includes("--container-edge") ? runContainerEdge : process.argv.includes("--containers") ? startContainers : main;
  mode().catch((error: unknown) => {
    process.stderr.write(`start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}

