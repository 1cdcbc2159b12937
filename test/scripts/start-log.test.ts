import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../scripts/lib/local-stack";
import { OUTBOX_PATH } from "../../scripts/lib/dev-outbox";
import { EDGE_HEALTH_PATH, wranglerLogFilter } from "../../scripts/lib/wrangler-log";

const TABLE = ["Your Worker has access to the following bindings:", "Binding   Resource   Mode", "env.DB (ffedge)   D1 Database   local", ""];
const CONTAINERS = ["The following containers are available:", "- ffedge-transcoder (/work/transcoder/Dockerfile)", ""];

function filtered(lines: string[], showContainers = false): string[] {
  const filter = wranglerLogFilter({ ownPaths: [EDGE_HEALTH_PATH, OUTBOX_PATH], showContainers });
  return lines.flatMap(filter);
}

describe("wranglerLogFilter", () => {
  it("drops the request lines of our own polling and keeps everyone else's", () => {
    expect(filtered([
      "[wrangler:info] GET /console/api/dev/outbox 200 OK (6ms)",
      "\u001b[1m[wrangler:info]\u001b[22m GET /npm-start-health-check 404 Not Found (3ms)",
      "[wrangler:info] GET /openapi.json 200 OK (20ms)",
      "[wrangler:info] POST /console/api/dev/outbox 404 Not Found (2ms)",
      "[wrangler:info] GET /console/api/dev/outbox-archive 404 Not Found (2ms)",
    ])).toEqual([
      "[wrangler:info] GET /openapi.json 200 OK (20ms)",
      "[wrangler:info] POST /console/api/dev/outbox 404 Not Found (2ms)",
      "[wrangler:info] GET /console/api/dev/outbox-archive 404 Not Found (2ms)",
    ]);
  });

  it("prints the bindings table once, and again only when it changed", () => {
    const changed = [...TABLE.slice(0, 2), "env.DB (other)   D1 Database   local", ""];
    expect(filtered(["start", ...TABLE, "reload", ...TABLE, "reload", ...changed])).toEqual(["start", ...TABLE, "reload", "reload", ...changed]);
  });

  it("hides the containers list unless containers run", () => {
    expect(filtered([...TABLE, ...CONTAINERS, "ready"])).toEqual([...TABLE, "ready"]);
    expect(filtered([...TABLE, ...CONTAINERS, "ready"], true)).toEqual([...TABLE, ...CONTAINERS, "ready"]);
  });
});

/** `npm start` itself (scripts/start.ts), on free ports and its own local state. */
describe("npm start's log", () => {
  let start: ChildProcess;
  let dir: string;
  let edgeUrl: string;
  let log = "";

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "ffedge-start-log-"));
    const [edgePort, transcoderPort] = [await freePort(), await freePort()];
    edgeUrl = `http://localhost:${edgePort}`;
    start = spawn(process.execPath, ["--import", "tsx", "scripts/start.ts"], {
      env: { ...process.env, FFEDGE_EDGE_PORT: String(edgePort), FFEDGE_TRANSCODER_PORT: String(transcoderPort), FFEDGE_PERSIST_TO: join(dir, "state") },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    for (const stream of [start.stdout!, start.stderr!]) stream.on("data", (chunk: Buffer) => (log += chunk.toString()));
    await until(() => log.includes("ffedge is running."), 120_000, () => log);
  }, 150_000);

  afterAll(async () => {
    if (start.exitCode === null && start.signalCode === null) {
      const exited = new Promise((resolve) => start.once("exit", resolve));
      start.kill("SIGINT");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 20_000))]);
      try {
        process.kill(-start.pid!, "SIGKILL");
      } catch {
        // The whole group is gone already.
      }
    }
    await rm(dir, { recursive: true, force: true });
  }, 30_000);

  it("shows the mail from the outbox but no line of its own polling, one bindings table and no containers", async () => {
    const signup = await fetch(`${edgeUrl}/console/api/auth/signup`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: edgeUrl },
      body: JSON.stringify({ email: "ada@example.com", password: "correct horse battery staple" }),
    });
    expect(signup.status).toBe(202);
    await until(() => log.includes("[mail] to ada@example.com"), 20_000, () => log);
    // The outbox is read every second and the edge checked every 5 s: ten seconds hold both many times.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    expect(log).not.toContain(OUTBOX_PATH);
    expect(log).not.toContain(EDGE_HEALTH_PATH);
    expect(log).not.toContain("GET /openapi.json");
    expect(log).not.toContain("GET /v1/me");
    expect(log.split("Your Worker has access to the following bindings:").length - 1).toBe(1);
    expect(log).not.toContain("containers are available");
    expect(log).toContain("POST /console/api/auth/signup 202");
  }, 60_000);
});

async function until(condition: () => boolean, timeoutMs: number, log: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met in time; the log so far:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
