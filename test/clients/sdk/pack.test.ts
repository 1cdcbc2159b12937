import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack } from "../../../scripts/lib/local-stack";
import { makeClip, probe } from "../../../scripts/lib/media";

/**
 * What a stranger gets: `npm pack` of clients/sdk installed into an empty project, run by the
 * system's plain Node 20 (no tsx, no repo), against the real local stack.
 */
const run = promisify(execFile);
const root = resolve(".");
const systemNode = existsSync("/usr/bin/node") ? "/usr/bin/node" : process.execPath;

let stack: Stack;
let key: string;
let work: string;
let project: string;

beforeAll(async () => {
  stack = await Stack.start();
  ({ key } = await stack.createUser());
  work = await mkdtemp(join(tmpdir(), "ffedge-sdk-pack-"));
  await run(join(root, "node_modules/.bin/tsx"), ["clients/sdk/build.ts"], { cwd: root });
  const { stdout } = await run("npm", ["pack", join(root, "clients/sdk"), "--pack-destination", work, "--json"], { cwd: work });
  const tarball = join(work, (JSON.parse(stdout) as { filename: string }[])[0]!.filename);
  project = join(work, "project");
  await run("mkdir", [project]);
  await writeFile(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
  await run("npm", ["install", tarball, "--offline", "--no-audit", "--no-fund"], { cwd: project });
  await makeClip(project, "in.mp4", { seconds: 1, size: "320x240" });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

describe("the packed @ffedge/sdk", () => {
  it("installs with no dependencies and ships only dist and the README", async () => {
    expect((await readdir(join(project, "node_modules"))).filter((name) => !name.startsWith("."))).toEqual(["@ffedge"]);
    const files = await readdir(join(project, "node_modules/@ffedge/sdk"));
    expect(files.sort()).toEqual(["README.md", "dist", "package.json"]);
    expect(await readdir(join(project, "node_modules/@ffedge/sdk/dist"))).toEqual(expect.arrayContaining(["index.js", "index.d.ts", "openapi.d.ts"]));
  });

  it("runs a command with a local input under plain Node 20 and the output downloads", async () => {
    expect((await run(systemNode, ["--version"])).stdout).toMatch(systemNode === "/usr/bin/node" ? /^v20\./ : /^v\d+\./);
    const script = `
      import { FFedge } from "@ffedge/sdk";
      const phases = new Set();
      const ff = new FFedge({ apiKey: process.env.KEY, baseUrl: process.env.URL });
      const task = await ff.run("ffmpeg -i ./in.mp4 -vf scale=160:-2 out.mp4", { onProgress: (p) => phases.add(p.phase) });
      const bytes = (await (await fetch(task.outputs[0].url)).arrayBuffer()).byteLength;
      const path = await ff.download(task.outputs[0], "downloads");
      console.log(JSON.stringify({ status: task.status, phases: [...phases], bytes, path }));
    `;
    await writeFile(join(project, "main.mjs"), script);
    await run("mkdir", [join(project, "downloads")]);
    const { stdout } = await run(systemNode, ["main.mjs"], { cwd: project, env: { PATH: process.env.PATH, KEY: key, URL: stack.edgeUrl } });
    const result = JSON.parse(stdout) as { status: string; phases: string[]; bytes: number; path: string };
    expect(result).toMatchObject({ status: "completed", phases: ["upload", "submitted", "task"], path: "downloads/out.mp4" });
    expect(result.bytes).toBeGreaterThan(0);
    const video = (await probe(join(project, "downloads/out.mp4"))).streams.find((s) => s.codec_type === "video");
    expect(video).toMatchObject({ width: 160, height: 120 });
  });

  it("type-checks a TypeScript consumer against the shipped declarations", async () => {
    await writeFile(join(project, "consumer.ts"), `
      import { FFedge, FFedgeError, verifyWebhook, type Task, type RunProgress } from "@ffedge/sdk";
      const ff = new FFedge({ apiKey: "ffe_x" });
      const onProgress = (p: RunProgress) => { if (p.phase === "task") console.log(p.progress, p.eta_seconds); };
      const task: Promise<Task> = ff.run("ffmpeg -i ./in.mp4 out.mp4", { onProgress });
      task.catch((e: unknown) => { if (e instanceof FFedgeError) console.log(e.code, e.problem.detail); });
      void verifyWebhook("{}", new Headers(), "whsec_x").then((event) => event.status);
    `);
    // No @types/node: the declarations must stand on the DOM's fetch types alone, as in a browser or Worker.
    const compilerOptions = { noEmit: true, strict: true, module: "nodenext", moduleResolution: "nodenext", lib: ["es2023", "dom"], types: [], target: "es2022" };
    await writeFile(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["consumer.ts"] }));
    const tsc = join(root, "node_modules/typescript/bin/tsc");
    const checked = await run(process.execPath, [tsc, "-p", "."], { cwd: project }).then(
      () => "",
      (error: { stdout: string }) => error.stdout,
    );
    expect(checked).toBe("");
  });
});
