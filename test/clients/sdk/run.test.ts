import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FFedge, FFedgeError, type RunProgress } from "../../../clients/sdk/src/index";
import { Stack } from "../../../scripts/lib/local-stack";
import { makeClip, probe } from "../../../scripts/lib/media";
import { startStalledOrigin } from "../../helpers/stalled-origin";

/** ff.run() and the task calls against the real local stack: happy path and every way it can fail. */
let stack: Stack;
let ff: FFedge;
let key: string;
let dir: string;
let origin: Awaited<ReturnType<typeof startStalledOrigin>>;
let stalledInput: string;

beforeAll(async () => {
  stack = await Stack.start();
  ({ key } = await stack.createUser());
  ff = new FFedge({ apiKey: key, baseUrl: stack.edgeUrl });
  dir = await mkdtemp(join(tmpdir(), "ffedge-sdk-"));
  await makeClip(dir, "in.mp4", { seconds: 1, size: "160x120" });
  // An input that never arrives keeps a task running for as long as a test needs.
  origin = await startStalledOrigin();
  stalledInput = origin.url;
}, 120_000);

afterAll(async () => {
  origin?.close();
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<FFedgeError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(FFedgeError);
  return error as FFedgeError;
}

describe("ff.run", () => {
  it("uploads a local input, follows the task to completion and downloads its output", async () => {
    const seen: RunProgress[] = [];
    const task = await ff.run("ffmpeg -i ./in.mp4 -vf scale=80:-2 out.mp4", { cwd: dir, onProgress: (p) => seen.push(p) });
    expect(task.status).toBe("completed");
    expect(task.command).toMatch(new RegExp(`^ffmpeg -i '${stack.edgeUrl}/uploads/`));
    expect(seen.some((p) => p.phase === "upload" && p.method === "multipart" && p.loaded === p.total && p.total > 0)).toBe(true);
    expect(seen.find((p) => p.phase === "submitted")).toEqual({ phase: "submitted", task_id: task.task_id });
    expect(seen.at(-1)).toMatchObject({ phase: "task", status: "completed", progress: 100 });
    const out = await mkdtemp(join(dir, "out-"));
    const path = await ff.download(task.outputs![0]!, out);
    expect(path).toBe(join(out, "out.mp4"));
    expect((await stat(path)).size).toBe(task.outputs![0]!.size);
    expect((await probe(path)).streams.find((s) => s.codec_type === "video")?.width).toBe(80);
    // Again: the file is replaced whole, through a partial file that does not stay behind.
    await ff.download(task.outputs![0]!, out);
    expect(await readdir(out)).toEqual(["out.mp4"]);
    await expect(ff.download(task.outputs![0]!, out, { overwrite: false })).rejects.toMatchObject({ code: "FILE_EXISTS" });
  });

  it("with wait: false resolves with the task as soon as it is submitted", async () => {
    const task = await ff.run(`ffmpeg -i ${stalledInput} out.mp4`, { wait: false });
    expect(["pending", "running"]).toContain(task.status);
    await ff.tasks.cancel(task.task_id);
  });

  it("prepare() uploads local inputs and rewrites only their words", async () => {
    const prepared = await ff.prepare(`ffmpeg -i in.mp4 -i ${stalledInput} -metadata title="a; b" out.mkv`, { cwd: dir });
    expect(prepared.uploads).toHaveLength(1);
    expect(prepared.uploads[0]).toMatchObject({ input: "in.mp4", path: join(dir, "in.mp4") });
    expect(prepared.command).toBe(`ffmpeg -i '${prepared.uploads[0]!.record.url}' -i ${stalledInput} -metadata title="a; b" out.mkv`);
  });

  it("rejects a missing local input with FILE_NOT_FOUND before sending anything", async () => {
    const error = await failure(ff.run("ffmpeg -i ./missing.mp4 out.mp4", { cwd: dir }));
    expect(error.code).toBe("FILE_NOT_FOUND");
    expect(error.detail).toContain("./missing.mp4");
  });

  it("rejects a refused command with the policy's code", async () => {
    const error = await failure(ff.run("ffmpeg -i ./in.mp4 -filter_script graph.txt out.mp4", { cwd: dir }));
    expect(error).toMatchObject({ status: 400, code: "OPTION_NOT_ALLOWED" });
    const operator = await failure(ff.run("ffmpeg -i ./in.mp4 out.mp4; rm -rf /", { cwd: dir }));
    expect(operator.code).toBe("COMMAND_SHELL_OPERATOR");
  });

  it("rejects a task that fails with the task's error_code and error", async () => {
    const error = await failure(ff.run("ffmpeg -i ./in.mp4 -map 0:s:5 out.mp4", { cwd: dir }));
    expect(error.code).toBe("FFMPEG_FAILED");
    expect(error.detail.length).toBeGreaterThan(0);
  });

  it("cancels the task on the service when the signal aborts, then rejects with CANCELED", async () => {
    const controller = new AbortController();
    let taskId: string | undefined;
    const running = ff.run(`ffmpeg -i ${stalledInput} out.mp4`, {
      signal: controller.signal,
      onProgress: (p) => {
        if (p.phase === "submitted") taskId = p.task_id;
        if (p.phase === "task") controller.abort();
      },
    });
    const error = await failure(running);
    expect(error.code).toBe("CANCELED");
    const task = await ff.tasks.get(taskId!);
    expect(task).toMatchObject({ status: "failed", error_code: "CANCELED" });
  });

  it("refuses a wrong key with UNAUTHORIZED", async () => {
    const stranger = new FFedge({ apiKey: "ffe_wrong", baseUrl: stack.edgeUrl });
    const error = await failure(stranger.run("ffmpeg -i ./in.mp4 out.mp4", { cwd: dir }));
    expect(error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
  });

  it("reports an unreachable service as NETWORK_ERROR", async () => {
    const offline = new FFedge({ apiKey: "ffe_x", baseUrl: "http://127.0.0.1:9", maxRetries: 0 });
    expect((await failure(offline.me())).code).toBe("NETWORK_ERROR");
  });
});

describe("following a task", () => {
  /** A client whose first `count` event streams break off after their first chunk, as a dropped connection does. */
  function droppingStreams(count: number, replaceStream = false) {
    let opened = 0;
    let polls = 0;
    const client = new FFedge({
      apiKey: key,
      baseUrl: stack.edgeUrl,
      fetch: async (input, init) => {
        const url = String(input);
        if (!url.endsWith("/events")) {
          if (/\/v1\/tasks\/[^/]+$/.test(new URL(url).pathname)) polls++;
          return fetch(input, init);
        }
        opened++;
        // A proxy that does not pass event streams through answers with something else.
        if (replaceStream) return new Response("buffered", { status: 200, headers: { "content-type": "text/plain" } });
        const response = await fetch(input, init);
        if (opened > count) return response;
        const reader = response.body!.getReader();
        const first = await reader.read();
        const cut = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(first.value!);
            controller.error(new TypeError("terminated"));
            void reader.cancel();
          },
        });
        return new Response(cut, { status: response.status, headers: response.headers });
      },
    });
    return { client, streams: () => opened, polls: () => polls };
  }

  it("reconnects the event stream after it drops and still sees the end", async () => {
    const { url } = await ff.files.upload(join(dir, "in.mp4"));
    const { client, streams } = droppingStreams(2);
    const created = await client.tasks.create(`ffmpeg -i ${url} -vf scale=80:-2 small.mp4`);
    const task = await client.tasks.wait(created.task_id);
    expect(task.status).toBe("completed");
    expect(streams()).toBeGreaterThanOrEqual(3);
  });

  it("falls back to polling when the event stream is not one", async () => {
    const { url } = await ff.files.upload(join(dir, "in.mp4"));
    const { client, polls } = droppingStreams(0, true);
    const created = await client.tasks.create(`ffmpeg -i ${url} -vf scale=80:-2 small.mp4`);
    const seen: string[] = [];
    const task = await client.tasks.wait(created.task_id, { onProgress: (event) => seen.push(event.status) });
    expect(task.status).toBe("completed");
    expect(seen.at(-1)).toBe("completed");
    expect(polls()).toBeGreaterThanOrEqual(2);
  });

  it("gives up waiting with TIMEOUT while the task goes on", async () => {
    const created = await ff.tasks.create(`ffmpeg -i ${stalledInput} out.mp4`);
    const error = await failure(ff.tasks.wait(created.task_id, { timeoutMs: 300 }));
    expect(error.code).toBe("TIMEOUT");
    expect((await ff.tasks.get(created.task_id)).status).not.toBe("failed");
    await ff.tasks.cancel(created.task_id);
  });
});

describe("task calls", () => {
  it("creates, waits, lists, reads the log of and deletes a task", async () => {
    const { url } = await ff.files.upload(join(dir, "in.mp4"));
    const created = await ff.tasks.create(`ffmpeg -i ${url} -t 0.5 short.mp4`);
    const events: string[] = [];
    for await (const message of ff.tasks.events(created.task_id)) events.push(message.event);
    expect(events[0]).toBe("status");
    expect(events.at(-1)).toBe("completed");
    expect((await ff.tasks.wait(created.task_id)).status).toBe("completed");
    expect((await ff.tasks.list({ status: "completed" })).tasks.map((t) => t.task_id)).toContain(created.task_id);
    expect(await ff.tasks.logs(created.task_id)).toContain("Output #0");
    await ff.tasks.delete(created.task_id);
    expect((await failure(ff.tasks.get(created.task_id))).code).toBe("NOT_FOUND");
  });

  it("validates a command and refuses a bad one with its code", async () => {
    expect(await ff.tasks.validate("ffmpeg -i https://example.com/a.mp4 b.webm")).toMatchObject({ valid: true, outputs: ["b.webm"] });
    expect((await failure(ff.tasks.validate("bash -c id"))).code).toBe("PROGRAM_NOT_ALLOWED");
  });

  it("reads the account, lists and deletes files, rotates the webhook secret", async () => {
    expect((await ff.me()).limits.max_upload_bytes).toBeGreaterThan(0);
    const record = await ff.files.upload(new Blob([new Uint8Array(1000)], { type: "application/octet-stream" }), { filename: "zeros.bin" });
    expect((await ff.files.list({ limit: 100 })).files.map((f) => f.key)).toContain(record.key);
    await ff.files.delete(record.key);
    expect((await ff.files.list({ limit: 100 })).files.map((f) => f.key)).not.toContain(record.key);
    expect((await ff.webhookSecret.rotate()).secret).toMatch(/^whsec_/);
  });

  it("refuses to download an output whose name is not a plain file name", async () => {
    const error = await failure(ff.download({ url: `${stack.edgeUrl}/x`, filename: "../escape.mp4" }, dir));
    expect(error.code).toBe("UNSAFE_FILENAME");
  });
});
