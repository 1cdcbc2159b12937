import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Clips, makeClips } from "../transcoder/helpers/media";
import { ContainerStack, TASK_TIMEOUT_SECONDS, ended, until } from "./stack";

const run = promisify(execFile);
const MB = 1024 * 1024;
/**
 * Minutes of work on any machine (motion interpolation to 60 fps at 1080p, about 1 s of output
 * per 20 s here): a plain 1080p scale of the 60 s clip finished inside the 60 s limit once the
 * machine was quiet.
 */
// Motion interpolation of 3,600 frames at 1080p is minutes of work anywhere, while ultrafast
// x264 (no lookahead) emits the first frames at once, so progress shows early even on busy
// cores; with `veryslow` its 60-frame lookahead kept progress at 0 past the 60 s limit.
const SLOW_COMMAND = () => `ffmpeg -i ${stack.inputUrl("long.mp4")} -vf scale=1920:1080,minterpolate=fps=60 -c:v libx264 -preset ultrafast out.mp4`;

let clips: Clips;
let stack: ContainerStack;
let key: string;

beforeAll(async () => {
  clips = await makeClips();
  stack = await ContainerStack.start({ "clip.mp4": clips.clip, "long.mp4": clips.long }, { "moved.mp4": "http://10.0.0.5/in.mp4" });
  key = await stack.createUser();
});

afterAll(async () => {
  await stack?.stop();
  await clips?.remove();
});

const submit = (command: string) => stack.submit(key, command);
const task = (id: string) => stack.task(key, id);
/** Neither a transcoder container nor its egress sidecar is left running. */
const noTranscoderContainer = () => until("the task's container to be gone", () => stack.containers({ sidecars: true }), (ids) => ids.length === 0, 60_000);

describe("tasks in TranscoderContainers (wrangler dev with Containers)", () => {
  it("fetches the input through the outbound handler and stores a >100 MB output through the Worker; the container is gone after", async () => {
    const id = await submit(`ffmpeg -i ${stack.inputUrl("clip.mp4")} -vf scale=1280:720 -c:v rawvideo -an out.mkv`);
    const done = await until("the task to end", () => task(id), ended);
    expect(done, JSON.stringify(done)).toMatchObject({ status: "completed", progress: 100 });
    const output = done.outputs![0]!;
    expect(output.size).toBeGreaterThan(100 * MB);
    const download = await fetch(output.url);
    expect(download.status).toBe(200);
    expect(Number(download.headers.get("content-length"))).toBe(output.size);
    await download.body?.cancel();
    const logs = await stack.fetch(`/v1/tasks/${id}/logs`, { headers: { authorization: `Bearer ${key}` } });
    expect(logs.status).toBe(200);
    await logs.body?.cancel();
    await noTranscoderContainer();
  });

  it("runs a task on the user's own upload: the container reads it from the edge's virtual host, not the CDN's URL", async () => {
    const form = new FormData();
    form.append("file", new Blob([await readFile(clips.clip)], { type: "video/mp4" }), "clip.mp4");
    const upload = await stack.fetch("/api/upload/file", { method: "POST", headers: { authorization: `Bearer ${key}` }, body: form });
    expect(upload.status, await upload.clone().text()).toBe(201);
    const { url } = await upload.json() as { url: string };
    const id = await submit(`ffmpeg -i ${url} -vf scale=96:-2 -c:v libx264 -preset ultrafast out.mp4`);
    const done = await until("the task to end", () => task(id), ended);
    expect(done, JSON.stringify(done)).toMatchObject({ status: "completed", progress: 100 });
    await noTranscoderContainer();
  });

  it("refuses an input that leads to a private address and ends the task with INPUT_DOWNLOAD_FAILED; the container is gone after", async () => {
    // Submission refuses a private address written in the command; a redirect reaches it only at download time.
    const id = await submit(`ffmpeg -i ${stack.inputUrl("moved.mp4")} out.mp4`);
    const done = await until("the task to end", () => task(id), ended);
    expect(done).toMatchObject({ status: "failed", error_code: "INPUT_DOWNLOAD_FAILED" });
    expect(done.error).toMatch(/10\.0\.0\.5/);
    await noTranscoderContainer();
  });

  it("cancels a running task and removes its container", async () => {
    const id = await submit(SLOW_COMMAND());
    await until("the task to run", () => task(id), (t) => t.status === "running" && t.progress > 0);
    expect((await stack.containers()).length).toBe(1);
    const cancel = await stack.fetch(`/v1/tasks/${id}/cancel`, { method: "POST", headers: { authorization: `Bearer ${key}` } });
    expect(cancel.status).toBeLessThan(300);
    expect(await task(id)).toMatchObject({ status: "failed", error_code: "CANCELED" });
    await noTranscoderContainer();
  });

  it("ends a task that runs past its time limit with TIMEOUT and removes its container", { timeout: (TASK_TIMEOUT_SECONDS + 300) * 1000 }, async () => {
    const id = await submit(SLOW_COMMAND());
    // The Task object's deadline: the time limit and two minutes' grace for the last report.
    const done = await until("the task to time out", () => task(id), ended, (TASK_TIMEOUT_SECONDS + 120 + 90) * 1000);
    // One run in one container throughout: it was not put to sleep for want of inbound requests.
    expect(done, JSON.stringify(done)).toMatchObject({ status: "failed", error_code: "TIMEOUT", retries: 0 });
    await noTranscoderContainer();
  });

  it("starts the run again in a new container when its container dies mid-task", async () => {
    const id = await submit(SLOW_COMMAND());
    await until("the task to run", () => task(id), (t) => t.status === "running" && t.progress > 0);
    const [first] = await stack.containers();
    await run("docker", ["kill", first!]);
    const second = await until("a new container", () => stack.containers(), (ids) => ids.length === 1 && ids[0] !== first, 120_000);
    expect(second[0]).not.toBe(first);
    await until("the new run to report", () => task(id), (t) => t.status === "running" && (t.retries ?? 1) >= 1);
    await stack.fetch(`/v1/tasks/${id}/cancel`, { method: "POST", headers: { authorization: `Bearer ${key}` } });
    await noTranscoderContainer();
  });
});

describe("the transcoder image wrangler builds", () => {
  it("ships only what runs: one bundled JavaScript module and the sandbox script on Node 24, without node_modules, npm or TypeScript, at most 300 MB", async () => {
    await until("wrangler's image", () => run("docker", ["image", "inspect", stack.image]).then(() => true, () => false), (found) => found, 60_000);
    const inImage = async (script: string) => (await run("docker", ["run", "--rm", "--entrypoint", "sh", stack.image, "-c", script])).stdout.trim();
    expect(await inImage("ls /app")).toBe("job-root.sh\nserver.mjs\nserver.mjs.map");
    expect(await inImage("node --version")).toMatch(/^v24\./);
    expect(await inImage("command -v npm tsx npx apt-get gcc || echo none")).toBe("none");
    expect(await inImage("ffmpeg -hide_banner -version >/dev/null && echo ffmpeg-runs")).toBe("ffmpeg-runs");
    const { stdout } = await run("docker", ["image", "inspect", stack.image, "--format", "{{.Size}}"]);
    expect(Number(stdout)).toBeLessThanOrEqual(300 * 1000 ** 2);
  });

  it("starts with every required sandbox layer where the host allows user namespaces, with no override", async () => {
    const secret = "x".repeat(40);
    const { stdout } = await run("docker", ["run", "-d", "--security-opt", "seccomp=unconfined", "--security-opt", "apparmor=unconfined", "-e", `TRANSCODER_SECRET=${secret}`, "-e", "EGRESS=container", "-e", "NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt", stack.image]);
    const id = stdout.trim();
    try {
      const logs = await until("the server to listen", async () => { const { stdout: out, stderr } = await run("docker", ["logs", id]); return out + stderr; }, (text) => text.includes("Server listening") || text.includes("could not start"), 60_000);
      expect(logs).toContain("Server listening");
      expect(logs).toMatch(/"network_namespace":true,"unprivileged_uid":true,"per_job_uid":false,"job_root":true/);
    } finally {
      await run("docker", ["rm", "-f", id]);
    }
  });
});
