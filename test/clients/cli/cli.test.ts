import { execFile } from "node:child_process";
import { mkdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir, probe } from "../../../scripts/lib/media";
import { Stack, authed } from "../../../scripts/lib/local-stack";
import { type CliOptions, type Installed, ROOT, errorLines, hasStackTrace, installPackedCli, runCli, spawnCollect } from "./cli-harness";

const exec = promisify(execFile);
/** Lower than any test file but the large one, so that one cannot go as one multipart body. */
const BODY_LIMIT = 3 * 1024 * 1024;

let stack: Stack;
let installed: Installed;
let user: { key: string; userId: string };
let dir: string;

beforeAll(async () => {
  [stack, installed] = await Promise.all([Stack.start({ edgeVars: { MAX_REQUEST_BODY_BYTES: String(BODY_LIMIT) } }), installPackedCli()]);
  user = await stack.createUser();
  dir = await mediaDir();
  await makeClip(dir, "local.mp4", { seconds: 2 });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
});

/** The installed CLI in `dir`, pointed at the stack by FFEDGE_URL and FFEDGE_API_KEY. */
function ffedge(args: string[], options: Partial<CliOptions> = {}) {
  return runCli(installed, args, { cwd: dir, ...options, env: { FFEDGE_URL: stack.edgeUrl, FFEDGE_API_KEY: user.key, ...options.env } });
}

async function serverTask(id: string): Promise<{ status: string; error_code?: string }> {
  return (await stack.fetch(`/v1/tasks/${id}`, authed(user.key))).json() as Promise<{ status: string; error_code?: string }>;
}

describe("the packed CLI", () => {
  it("installs from its tarball with no dependencies and runs on the system's Node", async () => {
    const manifest = JSON.parse(await readFile(join(installed.prefix, "lib/node_modules/@ffedge/cli/package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest).toMatchObject({ name: "@ffedge/cli", version: "0.1.0", bin: { ffedge: "dist/ffedge.js" } });
    expect(manifest.dependencies).toBeUndefined();
    const { stdout: listing } = await exec("tar", ["-tzf", installed.tarball]);
    expect(listing.trim().split("\n").sort()).toEqual(["package/README.md", "package/dist/ffedge.js", "package/package.json"]);
    const version = await ffedge(["--version"]);
    expect(version).toMatchObject({ code: 0, stdout: "0.1.0\n" });
    const { stdout: node } = await exec("node", ["--version"], { env: { PATH: installed.path } });
    expect(node.trim()).toBe(installed.nodeVersion);
  });
});

describe("ffedge run", () => {
  it("uploads the local input, runs the command and leaves a valid output in the working folder", async () => {
    const result = await ffedge(["run", "ffmpeg -i ./local.mp4 -vf scale=160:-2 small.mp4"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe("small.mp4\n");
    expect(result.stderr).toMatch(/Uploading \.\/local\.mp4 by multipart/);
    expect(result.stderr).toMatch(/tsk_\w+: completed/);
    const video = await probe(join(dir, "small.mp4"));
    expect(video.streams.find((s) => s.codec_type === "video")?.width).toBe(160);
  });

  it("prints only the completed task as JSON with --json", async () => {
    const result = await ffedge(["run", "--json", "ffmpeg -i ./local.mp4 -t 1 -c copy cut.mp4"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toBe("");
    const task = JSON.parse(result.stdout) as { status: string; outputs: { filename: string; size: number }[] };
    expect(task).toMatchObject({ status: "completed", progress: 100 });
    expect(task.outputs.map((output) => output.filename)).toEqual(["cut.mp4"]);
    expect((await stat(join(dir, "cut.mp4"))).size).toBe(task.outputs[0]!.size);
  });

  it("takes the command as argv words without the leading ffmpeg, and saves into --out", async () => {
    const result = await ffedge(["run", "--out", "renders", "--", "-i", "local.mp4", "-t", "1", "-vf", "scale=80:-2", "tiny.mp4"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${join("renders", "tiny.mp4")}\n`);
    expect((await probe(join(dir, "renders", "tiny.mp4"))).streams[0]!.width).toBe(80);
  });

  it("prints the task id with --no-wait, and tasks watch follows it to the end", async () => {
    const submitted = await ffedge(["run", "--no-wait", "-i ./local.mp4 -t 1 -c copy later.mp4"]);
    expect(submitted.code, submitted.stderr).toBe(0);
    expect(submitted.stdout).toMatch(/^tsk_\w+\n$/);
    const watched = await ffedge(["tasks", "watch", submitted.stdout.trim(), "--json"]);
    expect(watched.code, watched.stderr).toBe(0);
    expect(JSON.parse(watched.stdout)).toMatchObject({ task_id: submitted.stdout.trim(), status: "completed" });
  });

  it("exits 1 with one line naming the task's error when ffmpeg fails, and --json still prints the failed task", async () => {
    const result = await ffedge(["run", "--json", "ffmpeg -i ./local.mp4 -map 0:9 bad.mp4"]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/^ffedge: Task failed: .+\(FFMPEG_FAILED; ffmpeg's output: ffedge tasks logs tsk_\w+\)\n$/);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: "failed", error_code: "FFMPEG_FAILED" });
  });

  it("prints the policy's title in one line, without a stack, for a refused command", async () => {
    const input = await ffedge(["run", "ffmpeg -i file:///etc/passwd out.mp4"]);
    expect(input.code).toBe(1);
    expect(input.stderr).toMatch(/^ffedge: Input not allowed: .*file:\/\/\/etc\/passwd.*\n$/);
    const option = await ffedge(["run", "ffmpeg -re -i ./local.mp4 out.mp4"]);
    expect(option.code).toBe(1);
    expect(errorLines(option.stderr)).toEqual([expect.stringMatching(/^ffedge: Option not allowed: '-re'/)]);
    expect(hasStackTrace(input.stderr + option.stderr)).toBe(false);
  });

  it("says in one line that a local input does not exist, before anything is submitted", async () => {
    const before = ((await (await stack.fetch("/v1/tasks", authed(user.key))).json()) as { total: number }).total;
    const result = await ffedge(["run", "ffmpeg -i ./missing.mp4 out.mp4"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ffedge: File not found: The input "\.\/missing\.mp4" is not a file/);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(((await (await stack.fetch("/v1/tasks", authed(user.key))).json()) as { total: number }).total).toBe(before);
  });

  it("cancels the task on the service and exits 130 on Ctrl-C", async () => {
    await makeClip(dir, "long.mp4", { seconds: 30, size: "640x360", audio: false });
    let sent = false;
    const result = await ffedge(["run", "ffmpeg -i ./long.mp4 -vf scale=1280:-2 -c:v libx264 -preset veryslow slow.mp4"], {
      onStderr: (child, stderr) => {
        if (!sent && /: running/.test(stderr)) {
          sent = true;
          child.kill("SIGINT");
        }
      },
    });
    expect(sent, result.stderr).toBe(true);
    expect(result.code).toBe(130);
    const taskId = /Submitted (tsk_\w+)/.exec(result.stderr)![1]!;
    expect(errorLines(result.stderr)).toEqual([`ffedge: Interrupted: task ${taskId} canceled`]);
    expect(await serverTask(taskId)).toMatchObject({ status: "failed", error_code: "CANCELED" });
  }, 120_000);

  it("sends a file larger than one request body by tus, in chunks, and stays silent with --json", async () => {
    const big = join(dir, "big.mp4");
    await exec("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25:duration=6", "-c:v", "libx264", "-preset", "ultrafast", "-qp", "10", "-pix_fmt", "yuv420p", big]);
    const size = (await stat(big)).size;
    expect(size).toBeGreaterThan(BODY_LIMIT * 2);
    // The service refuses any body over this limit (413 REQUEST_TOO_LARGE, test/edge), so the file cannot have gone as one multipart request.
    const me = (await (await stack.fetch("/v1/me", authed(user.key))).json()) as { limits: { max_request_body_bytes: number } };
    expect(me.limits.max_request_body_bytes).toBe(BODY_LIMIT);

    const upload = await ffedge(["files", "upload", "big.mp4"]);
    expect(upload.code, upload.stderr).toBe(0);
    expect(upload.stderr).toMatch(/^Uploading big\.mp4 by tus \(/m);
    expect(upload.stderr).toMatch(/^Uploading big\.mp4: [1-9]\d%/m);
    expect(upload.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/uploads\/usr_\w+\/\w+\.mp4\n$/);

    const run = await ffedge(["run", "--json", "ffmpeg -i ./big.mp4 -t 1 -vf scale=160:-2 from-big.mp4"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toMatchObject({ status: "completed", outputs: [{ filename: "from-big.mp4" }] });
  }, 120_000);

  it("runs from the checkout with npm run cli, on paths relative to the folder npm was run from", async () => {
    const env = { ...process.env, FFEDGE_URL: stack.edgeUrl, FFEDGE_API_KEY: user.key, XDG_CONFIG_HOME: join(dir, ".config") };
    const result = await spawnCollect("npm", ["--prefix", ROOT, "run", "--silent", "cli", "--", "run", "-i ./local.mp4 -t 1 -c copy from-source.mp4"], { cwd: dir }, env);
    expect(result.code, result.stderr).toBe(0);
    expect((await stat(join(dir, "from-source.mp4"))).size).toBeGreaterThan(0);
  });
});

describe("ffedge login, whoami and the key's sources", () => {
  it("stores the key checked with the service in a 0600 file, and whoami reads it from there", async () => {
    const home = join(dir, "login-home");
    await mkdir(home);
    const login = await runCli(installed, ["login"], { cwd: home, stdin: `${user.key}\n`, env: { FFEDGE_URL: stack.edgeUrl } });
    expect(login.code, login.stderr).toBe(0);
    const file = join(home, ".config/ffedge/config.json");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, ".config/ffedge"))).mode & 0o777).toBe(0o700);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ url: stack.edgeUrl, api_key: user.key });

    const whoami = await runCli(installed, ["whoami"], { cwd: home });
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toContain(user.userId);
    expect(whoami.stdout).toContain(`key ${user.key.slice(0, 12)}… from ${file}`);
    expect(login.stdout + login.stderr + whoami.stdout + whoami.stderr).not.toContain(user.key);

    const other = await stack.createUser();
    const overridden = await runCli(installed, ["whoami", "--json"], { cwd: home, env: { FFEDGE_API_KEY: other.key } });
    expect(JSON.parse(overridden.stdout)).toMatchObject({ user_id: other.userId });
    const wrongUrl = await runCli(installed, ["whoami"], { cwd: home, env: { FFEDGE_URL: "http://127.0.0.1:9" } });
    expect(wrongUrl.code).toBe(1);
    expect(errorLines(wrongUrl.stderr)).toEqual([expect.stringMatching(/^ffedge: Network error: Could not reach http:\/\/127\.0\.0\.1:9/)]);

    const logout = await runCli(installed, ["logout"], { cwd: home });
    expect(logout.code).toBe(0);
    expect(JSON.parse(await readFile(file, "utf8"))).toEqual({ url: stack.edgeUrl });
  });

  it("refuses a wrong key in one line, exit 1, and saves nothing", async () => {
    const home = join(dir, "wrong-home");
    await mkdir(home);
    const login = await runCli(installed, ["login", "--key", "ffe_not-a-real-key"], { cwd: home, env: { FFEDGE_URL: stack.edgeUrl } });
    expect(login.code).toBe(1);
    expect(login.stderr).toMatch(/^ffedge: Unauthorized: .* does not accept this key .*nothing was saved\n$/);
    await expect(stat(join(home, ".config/ffedge/config.json"))).rejects.toThrow(/ENOENT/);
    const whoami = await runCli(installed, ["whoami"], { cwd: home, env: { FFEDGE_URL: stack.edgeUrl, FFEDGE_API_KEY: "ffe_not-a-real-key" } });
    expect(whoami.code).toBe(1);
    expect(whoami.stderr).toMatch(/^ffedge: Unauthorized: [^\n]+\n$/);
  });

  it("tells how to log in when there is no key at all, exit 2", async () => {
    const result = await runCli(installed, ["tasks", "list"], { cwd: join(dir, "wrong-home") });
    expect(result).toMatchObject({ code: 2, stdout: "" });
    expect(result.stderr).toBe("ffedge: No API key: run `ffedge login` or set FFEDGE_API_KEY\n");
  });
});

describe("ffedge tasks, files and validate", () => {
  it("lists, gets and shows the log of tasks, as tables or JSON", async () => {
    const list = await ffedge(["tasks", "list", "--json", "--limit", "2"]);
    const page = JSON.parse(list.stdout) as { total: number; tasks: { task_id: string }[] };
    expect(page.tasks).toHaveLength(2);
    const table = await ffedge(["tasks", "list", "--status", "completed"]);
    expect(table.stdout.split("\n")[0]).toMatch(/^ID\s+STATUS\s+PROGRESS\s+CREATED\s+COMMAND$/);
    const id = page.tasks[0]!.task_id;
    expect(JSON.parse((await ffedge(["tasks", "get", id, "--json"])).stdout)).toMatchObject({ task_id: id });
    expect((await ffedge(["tasks", "logs", id])).stdout).toMatch(/ffmpeg version|Input #0/);
    const usage = await ffedge(["tasks", "list", "--limit", "500"]);
    expect(usage.code).toBe(2);
    expect(errorLines(usage.stderr)).toHaveLength(1);
  });

  it("uploads, lists and removes files", async () => {
    const upload = await ffedge(["files", "upload", "--json", "local.mp4"]);
    const [record] = JSON.parse(upload.stdout) as { key: string; url: string }[];
    expect((await ffedge(["files", "list", "--json"])).stdout).toContain(record!.key);
    expect((await ffedge(["files", "rm", record!.url])).code).toBe(0);
    expect((await fetch(record!.url)).status).toBe(404);
  });

  it("validates a command with local inputs without uploading them, and refuses what the policy refuses", async () => {
    const ok = await ffedge(["validate", "--json", "ffmpeg -i ./local.mp4 -vf scale=160:-2 small.mp4"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({ valid: true, inputs: ["./local.mp4"], outputs: ["small.mp4"] });
    const refused = await ffedge(["validate", "-i ./local.mp4 -f lavfi -i testsrc out.mp4"]);
    expect(refused.code).toBe(1);
    expect(errorLines(refused.stderr)).toHaveLength(1);
  });
});
