import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunContainer, containersOfRun } from "../../scripts/lib/containers";
import { makeClip } from "../../scripts/lib/media";
import { freePort } from "../../scripts/lib/local-stack";

/** A cold start builds the image (minutes on two busy cores); a warm one takes it from Docker's cache. */
const READY_TIMEOUT_MS = 900_000;

let dir: string;
let child: ChildProcess;
let output = "";
let edgeUrl: string;
let key: string;
let buildId: string;
/** The workerd sessions of this run's containers (label dev.workerd.session), as scripts/lib/containers.ts learns them. */
const sessions = new Set<string>();
let seen: RunContainer[] = [];

/** Resolves with the first match of `pattern` in the child's output so far or to come. */
function waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = pattern.exec(output);
      if (!match) return false;
      clearTimeout(timer);
      child.stdout!.off("data", check);
      resolve(match);
      return true;
    };
    const timer = setTimeout(() => {
      child.stdout!.off("data", check);
      reject(new Error(`no ${pattern} within ${timeoutMs / 1000} s; output ends:\n${output.slice(-3000)}`));
    }, timeoutMs);
    if (!check()) child.stdout!.on("data", check);
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ffedge-start-containers-"));
  const port = await freePort();
  edgeUrl = `http://localhost:${port}`;
  // Its own group, as a terminal's foreground job: Ctrl-C reaches npm and start.ts together.
  child = spawn("npm", ["run", "start:containers"], {
    // Its own local state, so that this test never touches a developer's `npm start` beside it.
    env: { ...process.env, FFEDGE_EDGE_PORT: String(port), FFEDGE_PERSIST_TO: join(dir, "state") },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.setEncoding("utf8");
    createInterface({ input: stream }).on("line", (line) => {
      output += `${line}\n`;
    });
  }
  const [, banneredKey] = await waitFor(/API key \(user 'dev'\): (ffe_[A-Za-z0-9_-]+)/, READY_TIMEOUT_MS);
  key = banneredKey!;
  buildId = (await waitFor(/image cloudflare-dev\/transcodercontainer:([0-9a-f]+)/, 5_000))[1]!;
  // Printed after the banner: how long this start took (image build or Docker's cache).
  await waitFor(/\[start\] ready in \d+\.\d s\./, 5_000);
}, READY_TIMEOUT_MS + 60_000);

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    try {
      process.kill(-child.pid!, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
  await rm(dir, { recursive: true, force: true });
});

async function task(id: string): Promise<{ status: string; error?: string | null; outputs?: { url: string; size: number }[] }> {
  return (await fetch(`${edgeUrl}/v1/tasks/${id}`, { headers: { authorization: `Bearer ${key}` } })).json() as Promise<never>;
}

describe("npm run start:containers", () => {
  it("prints the banner with the key, the console and the container image", () => {
    expect(output).toContain(`Console:    ${edgeUrl}/console`);
    expect(output).toContain(`Edge:       ${edgeUrl}`);
    expect(output).toMatch(/Transcoder: one TranscoderContainer per task/);
    expect(output).toMatch(/\[start\] ready in \d+\.\d s\./);
  });

  it("runs a task on the user's own upload to completion in a TranscoderContainer", { timeout: 300_000 }, async () => {
    const form = new FormData();
    form.append("file", new Blob([await readFile(await makeClip(dir, "clip.mp4", { seconds: 2, size: "160x120" }))], { type: "video/mp4" }), "clip.mp4");
    const upload = await fetch(`${edgeUrl}/api/upload/file`, { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
    expect(upload.status, await upload.clone().text()).toBe(201);
    const { url } = (await upload.json()) as { url: string };

    const created = await fetch(`${edgeUrl}/v1/tasks`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ command: `ffmpeg -i ${url} -vf scale=80:-2 small.mp4` }),
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const { task_id: id } = (await created.json()) as { task_id: string };
    let state = await task(id);
    for (const deadline = Date.now() + 240_000; state.status !== "completed" && state.status !== "failed" && Date.now() < deadline;) {
      seen = await containersOfRun(buildId, sessions);
      await new Promise((resolve) => setTimeout(resolve, 500));
      state = await task(id);
    }
    expect(state, JSON.stringify(state)).toMatchObject({ status: "completed" });
    expect(state.outputs![0]!.size).toBeGreaterThan(0);
    // It ran in a container of this run (the run's image), so the check after stop looks at the right ones.
    expect(seen.length + (await containersOfRun(buildId, sessions)).length).toBeGreaterThan(0);
    expect(sessions.size).toBeGreaterThan(0);
  });

  it("stops on Ctrl-C (SIGINT) and leaves no container of this run, sidecars included", { timeout: 120_000 }, async () => {
    const exited = once(child, "exit");
    process.kill(-child.pid!, "SIGINT");
    const [code] = await exited;
    expect(code, output.slice(-2000)).toBe(0);
    expect(await containersOfRun(buildId, sessions)).toEqual([]);
  });
});
