import { type ChildProcess, spawn } from "node:child_process";
import { type Server, createServer as createHttpServer } from "node:http";
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { descendants, freePort } from "../../scripts/lib/local-stack";
import { type LivingProcess, living } from "../helpers/processes";

// `npm start` itself, as a developer or a CI job runs it, on free ports: whatever ends it, nothing
// it started may keep running, and it never takes another program for its own service.

const READY_MS = 150_000;

interface Started {
  npm: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  ports: { edge: number; transcoder: number };
}

/** `npm start` as the leader of its own process group, as in a terminal or a CI job. */
async function npmStart(ports?: { edge: number; transcoder: number }): Promise<Started> {
  const chosen = ports ?? { edge: await freePort(), transcoder: await freePort() };
  const npm = spawn("npm", ["start"], {
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, FFEDGE_EDGE_PORT: String(chosen.edge), FFEDGE_TRANSCODER_PORT: String(chosen.transcoder) },
  });
  let text = "";
  npm.stdout!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  npm.stderr!.on("data", (chunk: Buffer) => (text += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => npm.once("exit", (code) => resolve(code)));
  return { npm, output: () => text, exited, ports: chosen };
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, failure: () => string, everyMs = 200): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await condition()); ) {
    if (Date.now() > deadline) throw new Error(failure());
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

function listens(server: Server, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => resolve(true));
  });
}

async function portIsFree(port: number): Promise<boolean> {
  const server = createServer();
  const free = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => resolve(true));
  });
  if (free) await new Promise((resolve) => server.close(resolve));
  return free;
}

/** Starts the stack, ends it with `end`, and checks that nothing it started is left. */
async function expectNothingLeftAfter(end: (npm: ChildProcess) => void): Promise<void> {
  const started = await npmStart();
  let tree: LivingProcess[] = [];
  try {
    await until(() => started.output().includes("ffedge is running"), READY_MS, () => `npm start never got ready:\n${started.output()}`);
    tree = await living(await descendants(started.npm.pid!));
    // The supervisor, both services and what they started (wrangler's workerd).
    expect(tree.some((row) => row.args.includes("transcoder/server.ts"))).toBe(true);
    expect(tree.some((row) => /workerd/.test(row.args))).toBe(true);
    end(started.npm);
    let left: LivingProcess[] = [];
    const pids = tree.map((row) => row.pid);
    await until(async () => (left = await living(pids)).length === 0, 30_000, () => `still running:\n${left.map((row) => `${row.pid} ${row.args}`).join("\n")}`);
    expect(await portIsFree(started.ports.transcoder)).toBe(true);
    expect(await portIsFree(started.ports.edge)).toBe(true);
  } finally {
    // Whatever the outcome, leave nothing of this test behind.
    for (const row of await living([started.npm.pid!, ...tree.map((row) => row.pid)])) process.kill(row.pid, "SIGKILL");
  }
}

describe("npm start under faults", () => {
  it("stops everything it started when the npm process gets SIGTERM", async () => {
    await expectNothingLeftAfter((npm) => npm.kill("SIGTERM"));
  }, 240_000);

  it("stops everything it started when the npm process gets SIGHUP (a closed terminal)", async () => {
    await expectNothingLeftAfter((npm) => npm.kill("SIGHUP"));
  }, 240_000);

  it("leaves nothing running when its whole process group is SIGKILLed (a cancelled CI job)", async () => {
    await expectNothingLeftAfter((npm) => process.kill(-npm.pid!, "SIGKILL"));
  }, 240_000);

  it("never takes another program on its transcoder's port for its transcoder", async () => {
    const started = await npmStart();
    const impostor = createHttpServer((_request, response) => response.end('{"status":"ok"}'));
    try {
      await until(() => started.output().includes("ffedge is running"), READY_MS, () => `npm start never got ready:\n${started.output()}`);
      const transcoder = (await living(await descendants(started.npm.pid!))).find((row) => row.args.includes("transcoder/server.ts"))!;
      process.kill(transcoder.pid, "SIGKILL");
      // The supervisor waits a second before its restart: the impostor takes the port first.
      await until(() => listens(impostor, started.ports.transcoder), 900, () => "the transcoder's port never came free", 20);
      await until(() => /transcoder exited \(code 1\)/.test(started.output()), 60_000, () => `the restart never met the taken port:\n${started.output()}`);
      // Two health checks (every 5 s) against the impostor, which answers /health with 200.
      await new Promise((resolve) => setTimeout(resolve, 12_000));
      expect(started.output()).toMatch(/EADDRINUSE/);
      expect(started.output()).not.toContain("transcoder is back");
    } finally {
      impostor.close();
      const pids = await descendants(started.npm.pid!);
      process.kill(-started.npm.pid!, "SIGKILL");
      for (const row of await living(pids)) process.kill(row.pid, "SIGKILL");
    }
  }, 240_000);

  it("refuses in one line, exiting non-zero, when another program holds the transcoder's port", async () => {
    // It even answers /health: only the identity npm start gives its own transcoder tells them apart.
    const impostor = createHttpServer((_request, response) => response.end('{"status":"ok"}')).listen(0, "127.0.0.1");
    await new Promise((resolve) => impostor.once("listening", resolve));
    const ports = { edge: await freePort(), transcoder: (impostor.address() as { port: number }).port };
    const started = await npmStart(ports);
    try {
      const code = await Promise.race([started.exited, new Promise<"running">((resolve) => setTimeout(() => resolve("running"), 60_000))]);
      expect(code, started.output()).not.toBe(0);
      expect(code, started.output()).not.toBe("running");
      expect(started.output()).toContain(`port ${ports.transcoder} (transcoder) is already in use by another program`);
      expect(started.output()).not.toContain("ffedge is running");
      expect(started.output()).not.toContain("transcoder is back");
    } finally {
      for (const pid of await descendants(started.npm.pid!)) process.kill(pid, "SIGKILL");
      if (started.npm.exitCode === null) process.kill(-started.npm.pid!, "SIGKILL");
      impostor.close();
    }
  }, 120_000);
});
