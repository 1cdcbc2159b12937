import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "@20minutes/s3rver";
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
  // Failed deliveries are retried twice, a second apart, so a run waiting for them ends quickly.
  [stack, installed] = await Promise.all([Stack.start({ edgeVars: { DESTINATION_RETRY_SCHEDULE_SECONDS: "1,1" } }), installPackedCli()]);
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
  it("waits for the delivery to an unreachable bucket, prints the task and exits 1 naming the output and its code; tasks get shows it failed", async () => {
    const { id } = await post("/v1/destinations", { name: "cli-dst", type: "s3", endpoint: "http://127.0.0.1:9", region: "us-east-1", bucket: "media", access_key_id: "AKIDCLI", secret_access_key: "secret" });
    const result = await ffedge(["run", "--json", "--no-download", "--destination", "cli-dst:only", "ffmpeg -i ./local.mp4 -t 1 -c copy delivered.mp4"]);
    expect(result.code, result.stderr).toBe(1);
    expect(errorLines(result.stderr)).toEqual([expect.stringMatching(/^ffedge: Delivery failed: Task tsk_\w+ completed, but delivered\.mp4: DESTINATION_UNREACHABLE /)]);
    const task = JSON.parse(result.stdout) as { task_id: string; outputs: { destination?: { id: string; status: string } }[] };
    expect(task.outputs[0]!.destination).toMatchObject({ id, status: "failed" });
    const shown = await ffedge(["tasks", "get", task.task_id]);
    expect(shown.stdout).toMatch(new RegExp(`^output {4}delivered\\.mp4 .* → failed [^\\n]*delivered\\.mp4`, "m"));
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

describe("ffedge run --destination to a bucket that accepts the outputs", () => {
  let s3: S3rver;
  let s3Dir: string;
  let endpoint: string;

  beforeAll(async () => {
    s3Dir = await mkdtemp(join(tmpdir(), "ffedge-cli-s3-"));
    s3 = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: s3Dir, configureBuckets: [{ name: "cli-media" }] });
    endpoint = `http://127.0.0.1:${((await s3.run()) as AddressInfo).port}`;
    await post("/v1/destinations", { name: "cli-s3", type: "s3", endpoint, region: "us-east-1", bucket: "cli-media", prefix: "out/", access_key_id: "S3RVER", secret_access_key: "S3RVER" });
  });

  afterAll(async () => {
    await s3?.close();
    if (s3Dir) await rm(s3Dir, { recursive: true, force: true });
  });

  it("with :only, exits 0 without downloading: stdout is each output's bucket URL, stderr where it went", async () => {
    const result = await ffedge(["run", "--destination", "cli-s3:only", "ffmpeg -i ./local.mp4 -t 1 -c copy only.mp4"]);
    expect(result.code, result.stderr).toBe(0);
    const taskId = /(tsk_\w+): completed/.exec(result.stderr)![1]!;
    expect(result.stderr).toContain(`${taskId}: completed; waiting for its deliveries to the destination (1 of 1 pending)`);
    expect(result.stderr).toMatch(new RegExp(`^Delivered only\\.mp4 to dst_\\w+ as out/${taskId}/only\\.mp4 \\(${endpoint}/\\S+\\)$`, "m"));
    expect(result.stdout).toMatch(new RegExp(`^${endpoint}/\\S*out/${taskId}/only\\.mp4\n$`));
    expect(existsSync(join(dir, "only.mp4"))).toBe(false);
    const bytes = await fetch(result.stdout.trim());
    expect(bytes.status).toBe(200);
    expect((await bytes.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  });

  it("with copy, downloads the output as without a destination and says where it was delivered", async () => {
    const result = await ffedge(["run", "--destination", "cli-s3", "ffmpeg -i ./local.mp4 -t 1 -c copy copied.mp4"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("copied.mp4\n");
    expect(result.stderr).toMatch(/^Delivered copied\.mp4 to dst_\w+ as out\/tsk_\w+\/copied\.mp4 /m);
    expect((await probe(join(dir, "copied.mp4"))).format.duration).toBeDefined();
  });
});

describe("refused runs", () => {
  it("exit 1 with the service's refusal and leave the user's uploads as they were", async () => {
    const files = async () => ((await (await stack.fetch("/api/files?limit=100", authed(user.key))).json()) as { total: number }).total;
    const before = await files();
    const refused = [
      { args: ["run", "--destination", "nosuch", "ffmpeg -i ./local.mp4 -t 1 nosuch.mp4"], line: /^ffedge: Destination not found: .*nosuch/ },
      { args: ["run", "--step", "ffmpeg -i ./local.mp4 -t 1 a.mp4", "--step", "ffmpeg -i {{steps.0.outputs.zz.mp4}} b.mp4"], line: /^ffedge: Step reference invalid: .*zz\.mp4/ },
      { args: ["run", "--preset", "cli-scale", "--param", "video=./local.mp4", "--param", "width=wide"], line: /^ffedge: Invalid preset parameters: params\.width: .*\(PRESET_PARAMS_INVALID\)$/ },
    ];
    // The titles name the codes DESTINATION_NOT_FOUND and STEP_REFERENCE_INVALID, so those lines carry no (CODE).
    for (const { args, line } of refused) {
      const result = await ffedge(args);
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(/Uploaded \.\/local\.mp4/);
      expect(errorLines(result.stderr)).toEqual([expect.stringMatching(line)]);
      expect(await files()).toBe(before);
    }
  });
});
