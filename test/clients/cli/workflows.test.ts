import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir, probe } from "../../../scripts/lib/media";
import { Stack, authed } from "../../../scripts/lib/local-stack";
import { type CliOptions, type Installed, errorLines, installPackedCli, runCli } from "./cli-harness";

/** The CLI's workflow commands (presets, run --preset, --step and --destination, tasks retry, steps in tasks get) through the packed tarball against the real stack. */
let stack: Stack;
let installed: Installed;
let user: { key: string; userId: string };
let dir: string;

beforeAll(async () => {
  [stack, installed] = await Promise.all([Stack.start(), installPackedCli()]);
  user = await stack.createUser();
  dir = await mediaDir();
  await makeClip(dir, "local.mp4", { seconds: 2, size: "320x240" });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

async function post(path: string, body: unknown): Promise<{ id?: string; task_id?: string }> {
  const response = await stack.fetch(path, authed(user.key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
  expect(response.status, path).toBe(201);
  return response.json() as Promise<{ id?: string; task_id?: string }>;
}

function ffedge(args: string[], options: Partial<CliOptions> = {}) {
  return runCli(installed, args, { cwd: dir, ...options, env: { FFEDGE_URL: stack.edgeUrl, FFEDGE_API_KEY: user.key, ...options.env } });
}

const PARAMETERS = {
  type: "object",
  properties: {
    video: { type: "string", examples: ["https://example.com/in.mp4"] },
    width: { type: "integer", minimum: 16, maximum: 640, default: 160 },
  },
  required: ["video"],
};
const COMMAND = "ffmpeg -i {{video}} -vf scale={{width}}:-2 -c:v libx264 -preset ultrafast scaled.mp4";

describe("ffedge presets", () => {
  it("creates presets from options or a file, lists them after the built-ins, shows, expands and deletes one", async () => {
    const created = await ffedge(["presets", "create", "--name", "cli-scale", "--command", COMMAND, "--parameters", JSON.stringify(PARAMETERS)]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toMatch(/^pre_[0-9a-f]{24}\n$/);
    await writeFile(join(dir, "gray.json"), JSON.stringify({ name: "cli-gray", description: "Gray frames", command: "ffmpeg -i {{video}} -vf format=gray gray.mp4", parameters: { type: "object", properties: { video: PARAMETERS.properties.video }, required: ["video"] } }));
    const fromFile = await ffedge(["presets", "create", "--file", "gray.json", "--json"]);
    expect(fromFile.code, fromFile.stderr).toBe(0);
    expect(JSON.parse(fromFile.stdout)).toMatchObject({ name: "cli-gray", description: "Gray frames", builtin: false });

    const table = await ffedge(["presets", "list"]);
    const lines = table.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+KIND\s+PARAMETERS\s+COMMAND$/);
    expect(lines[1]).toMatch(/\sbuilt-in\s/);
    expect(lines.slice(-2).map((line) => line.split(/\s+/).slice(0, 3))).toEqual([["cli-gray", "yours", "video"], ["cli-scale", "yours", "video,width"]]);
    const mine = JSON.parse((await ffedge(["presets", "list", "--mine", "--json"])).stdout) as { presets: { name: string }[] };
    expect(mine.presets.map((preset) => preset.name)).toEqual(["cli-gray", "cli-scale"]);

    const shown = await ffedge(["presets", "show", "cli-scale"]);
    expect(shown.stdout).toContain(`command   ${COMMAND}`);
    expect(shown.stdout).toMatch(/param {5}width {2}integer 16\.\.640 default 160/);
    const expanded = await ffedge(["presets", "expand", "cli-scale", "--param", "video=https://example.com/clip.mp4", "--param", "width=320", "--json"]);
    expect(expanded.code, expanded.stderr).toBe(0);
    expect(JSON.parse(expanded.stdout)).toMatchObject({ command: expect.stringContaining("scale=320:-2"), inputs: ["https://example.com/clip.mp4"] });

    const deleted = await ffedge(["presets", "delete", "cli-gray"]);
    expect(deleted.code, deleted.stderr).toBe(0);
    const gone = await ffedge(["presets", "show", "cli-gray"]);
    expect(gone.code).toBe(1);
    expect(errorLines(gone.stderr)).toEqual([expect.stringMatching(/^ffedge: Preset not found: /)]);
  });

  it("refuses a preset it cannot read as a usage error (exit 2), and one the service refuses with its code (exit 1)", async () => {
    const badJson = await ffedge(["presets", "create", "--name", "x", "--command", "ffmpeg -i {{v}} o.mp4", "--parameters", "{not json"]);
    expect(badJson.code).toBe(2);
    expect(errorLines(badJson.stderr)).toEqual([expect.stringMatching(/^ffedge: Invalid --parameters: /)]);
    const unknownPlaceholder = await ffedge(["presets", "create", "--name", "cli-broken", "--command", "ffmpeg -i {{video}} -vf scale={{nope}}:-2 o.mp4", "--parameters", JSON.stringify(PARAMETERS)]);
    expect(unknownPlaceholder.code).toBe(1);
    expect(errorLines(unknownPlaceholder.stderr)).toEqual([expect.stringMatching(/^ffedge: Invalid preset: .*nope.*\(PRESET_INVALID\)$/)]);
  });
});

describe("ffedge run --preset", () => {
  let taskId: string;

  it("uploads a local file parameter, passes a numeric parameter as an integer and downloads the output at the asked width", async () => {
    const result = await ffedge(["run", "--preset", "cli-scale", "--param", "video=./local.mp4", "--param", "width=120"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("scaled.mp4\n");
    expect(result.stderr).toMatch(/Uploading \.\/local\.mp4 by multipart/);
    taskId = /(tsk_\w+): completed/.exec(result.stderr)![1]!;
    expect((await probe(join(dir, "scaled.mp4"))).streams.find((s) => s.codec_type === "video")?.width).toBe(120);
  });

  it("exits 1 with PRESET_PARAMS_INVALID naming the parameter when a value is not of its type", async () => {
    const result = await ffedge(["run", "--preset", "cli-scale", "--param", "video=https://example.com/in.mp4", "--param", "width=wide"]);
    expect(result.code).toBe(1);
    expect(errorLines(result.stderr)).toEqual([expect.stringMatching(/^ffedge: Invalid preset parameters: params\.width: .*\(PRESET_PARAMS_INVALID\)$/)]);
  });

  it("refuses a command together with --preset, and --param without a preset, as usage errors", async () => {
    const both = await ffedge(["run", "--preset", "cli-scale", "ffmpeg -i ./local.mp4 out.mp4"]);
    expect(both.code).toBe(2);
    expect(errorLines(both.stderr)).toEqual(["ffedge: Conflicting arguments: give a command, --preset or --step, only one of them"]);
    const stray = await ffedge(["run", "--param", "width=1", "ffmpeg -i ./local.mp4 out.mp4"]);
    expect(stray.code).toBe(2);
    const malformed = await ffedge(["run", "--preset", "cli-scale", "--param", "width"]);
    expect(malformed.code).toBe(2);
    expect(errorLines(malformed.stderr)).toEqual([expect.stringMatching(/expected name=value/)]);
  });

  it("retries the preset's task as a new one with ffedge tasks retry, and watch follows it to completion", async () => {
    const retried = await ffedge(["tasks", "retry", taskId]);
    expect(retried.code, retried.stderr).toBe(0);
    const newId = retried.stdout.trim();
    expect(newId).toMatch(/^tsk_\w+$/);
    expect(newId).not.toBe(taskId);
    const watched = await ffedge(["tasks", "watch", newId, "--json"]);
    expect(watched.code, watched.stderr).toBe(0);
    expect(JSON.parse(watched.stdout)).toMatchObject({ task_id: newId, status: "completed" });
  });
});

describe("ffedge run --destination and --step, and tasks get", () => {
  it("names the destination on the task, and tasks get shows each output's delivery", async () => {
    const { id } = await post("/v1/destinations", { name: "cli-dst", type: "s3", endpoint: "http://127.0.0.1:9", region: "us-east-1", bucket: "media", access_key_id: "AKIDCLI", secret_access_key: "secret" });
    const result = await ffedge(["run", "--json", "--no-download", "--destination", "cli-dst:only", "ffmpeg -i ./local.mp4 -t 1 -c copy delivered.mp4"]);
    expect(result.code, result.stderr).toBe(0);
    const task = JSON.parse(result.stdout) as { task_id: string; outputs: { destination?: { id: string; status: string } }[] };
    expect(task.outputs[0]!.destination).toMatchObject({ id });
    const shown = await ffedge(["tasks", "get", task.task_id]);
    expect(shown.stdout).toMatch(new RegExp(`^output {4}delivered\\.mp4 .* → (pending|failed) [^\\n]*delivered\\.mp4`, "m"));
    const usage = await ffedge(["run", "--destination", ":only", "ffmpeg -i ./local.mp4 out.mp4"]);
    expect(usage.code).toBe(2);
  });

  it("runs chained --step commands: the first step's local input uploaded, the last step's output downloaded", async () => {
    const result = await ffedge(["run", "--step", "ffmpeg -i ./local.mp4 -t 1 -c copy first.mp4", "--step", "-i {{steps.0.outputs.first.mp4}} -vf scale=48:-2 second.mp4"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Uploading \.\/local\.mp4/);
    expect(result.stdout.split("\n")).toContain("second.mp4");
    expect((await probe(join(dir, "second.mp4"))).streams.find((s) => s.codec_type === "video")?.width).toBe(48);
  });

  it("shows each step of a chained task with its status", async () => {
    const [record] = JSON.parse((await ffedge(["files", "upload", "--json", "local.mp4"])).stdout) as { url: string }[];
    const { task_id } = await post("/v1/tasks", {
      steps: [{ command: `ffmpeg -i ${record!.url} -t 1 -c copy part.mp4`, publish: false }, { command: "ffmpeg -i {{steps.0.outputs.part.mp4}} -vf scale=64:-2 part-small.mp4" }],
    });
    const watched = await ffedge(["tasks", "watch", task_id!]);
    expect(watched.code, watched.stderr).toBe(0);
    expect(watched.stdout).toMatch(/^step 0 {4}completed {2}100% {2}ffmpeg -i \S+ -t 1 -c copy part\.mp4$/m);
    expect(watched.stdout).toMatch(/^step 1 {4}completed {2}100% {2}ffmpeg -i \S+ -vf scale=64:-2 part-small\.mp4$/m);
    expect(watched.stdout).toMatch(/^output {4}part-small\.mp4 /m);
  });
});
