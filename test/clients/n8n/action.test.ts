import { readFile, rm, writeFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir, probe } from "../../../scripts/lib/media";
import { Stack } from "../../../scripts/lib/local-stack";
import { ACTION_TYPE, execute, host, testCredential } from "./n8n-host";

/** The action node and the credential, run through n8n-core's execution contexts against the real local stack. */
let stack: Stack;
let key: string;
let clip: Buffer;
let clipUrl: string;

const credentials = () => ({ baseUrl: stack.edgeUrl, apiKey: key });
const action = (parameters: Record<string, unknown>) => host(ACTION_TYPE, parameters, credentials());

beforeAll(async () => {
  stack = await Stack.start();
  ({ key } = await stack.createUser());
  const path = await makeClip(await mediaDir(), "n8n-clip.mp4", { seconds: 1, size: "160x120" });
  clip = await readFile(path);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe("the ffedge API credential", () => {
  it("is accepted with a valid key, GET /v1/me answering 2xx, with or without /v1 in the base URL", async () => {
    expect(await testCredential(action({}))).toMatchObject({ status: "OK" });
    expect(await testCredential(host(ACTION_TYPE, {}, { baseUrl: `${stack.edgeUrl}/v1/`, apiKey: key }))).toMatchObject({ status: "OK" });
  });

  it("is refused with a wrong key", async () => {
    const result = await testCredential(host(ACTION_TYPE, {}, { baseUrl: stack.edgeUrl, apiKey: "ffe_not_a_key" }));
    expect(result.status).toBe("Error");
  });
});

describe("the ffedge node", () => {
  it("uploads a file from a binary property and outputs its URL", async () => {
    const [item] = await execute(action({ resource: "file", operation: "upload", binaryPropertyName: "video" }), [
      { json: {}, binary: { video: { data: clip.toString("base64"), mimeType: "video/mp4", fileName: "clip.mp4", fileExtension: "mp4" } } },
    ]);
    expect(item!.json).toMatchObject({ filename: "clip.mp4", size: clip.length, content_type: "video/mp4" });
    clipUrl = String(item!.json.url);
    const served = await fetch(clipUrl);
    expect(served.status).toBe(200);
    expect(Buffer.from(await served.arrayBuffer()).equals(clip)).toBe(true);
  });

  it("runs a command, waits for it and outputs the completed task with its outputs", async () => {
    const [item] = await execute(action({ resource: "task", operation: "run", command: `ffmpeg -i ${clipUrl} -vf scale=80:-2 small.mp4`, wait: true, options: { pollSeconds: 0.2 } }));
    expect(item!.json).toMatchObject({ status: "completed", progress: 100 });
    const outputs = item!.json.outputs as { filename: string; url: string; size: number }[];
    expect(outputs.map((output) => output.filename)).toEqual(["small.mp4"]);
    const dir = await mediaDir();
    const path = `${dir}/n8n-small.mp4`;
    await writeFile(path, Buffer.from(await (await fetch(outputs[0]!.url)).arrayBuffer()));
    expect((await probe(path)).streams.find((stream) => stream.codec_type === "video")?.width).toBe(80);
    await rm(path, { force: true });
  });

  it("runs a built-in preset with parameters", async () => {
    const [item] = await execute(action({ resource: "task", operation: "runPreset", preset: "thumbnail", params: JSON.stringify({ video: clipUrl, at: 0, width: 64 }), options: { pollSeconds: 0.2 } }));
    expect(item!.json).toMatchObject({ status: "completed" });
    expect((item!.json.outputs as { filename: string }[]).map((output) => output.filename)).toEqual(["thumbnail.jpg"]);
    expect(String(item!.json.command)).toContain("scale=64:-2");
  });

  it("without waiting outputs the task as just submitted; Get and Get Many read it back", async () => {
    const [submitted] = await execute(action({ resource: "task", operation: "run", command: `ffmpeg -i ${clipUrl} -t 0.5 -c copy cut.mp4`, wait: false }));
    const taskId = String(submitted!.json.task_id);
    expect(["pending", "running", "completed"]).toContain(submitted!.json.status);
    const [read] = await execute(action({ resource: "task", operation: "get", taskId }));
    expect(read!.json.task_id).toBe(taskId);
    const listed = await execute(action({ resource: "task", operation: "list", limit: 100 }));
    expect(listed.map((item) => item.json.task_id)).toContain(taskId);
    expect(listed.length).toBeGreaterThanOrEqual(3);
  });

  it("stops with the service's problem code when the command is refused", async () => {
    const error = await execute(action({ resource: "task", operation: "run", command: "ffmpeg -i /etc/passwd out.mp4" })).then(
      () => undefined,
      (e: unknown) => e as { message: string; httpCode?: string },
    );
    expect(error?.httpCode).toBe("400");
    expect(error?.message).toMatch(/^[A-Z_]+: /);
  });

  it("outputs the error instead of stopping when Continue On Fail is set", async () => {
    const h = action({ resource: "task", operation: "get", taskId: "tsk_000000000000000000000000" });
    h.node.continueOnFail = true;
    const [item] = await execute(h);
    expect(String(item!.json.error)).toMatch(/^[A-Z_]+: /);
  });
});

describe("the ffedge node's workflow operations", () => {
  /** Writes a binary field's bytes (inline base64 here: n8n's default memory mode) to a file and ffprobes it. */
  async function probeBinary(binary: { data: string; fileName?: string }): Promise<Awaited<ReturnType<typeof probe>>> {
    const path = `${await mediaDir()}/n8n-${binary.fileName}`;
    await writeFile(path, Buffer.from(binary.data, "base64"));
    try {
      return await probe(path);
    } finally {
      await rm(path, { force: true });
    }
  }

  it("runs chained steps with a private first step and downloads the outputs into binary fields", async () => {
    const [item] = await execute(action({
      resource: "task", operation: "runSteps",
      steps: { step: [{ command: `ffmpeg -i ${clipUrl} -t 0.5 -c copy cut.mp4`, publish: false }, { command: "ffmpeg -i {{steps.0.outputs.cut.mp4}} -vf scale=48:-2 tiny.mp4" }] },
      options: { pollSeconds: 0.2, downloadOutputs: true },
    }));
    expect(item!.json).toMatchObject({ status: "completed" });
    expect((item!.json.outputs as { filename: string }[]).map((output) => output.filename)).toEqual(["tiny.mp4"]);
    expect(Object.keys(item!.binary!)).toEqual(["output_0"]);
    expect(item!.binary!.output_0).toMatchObject({ fileName: "tiny.mp4", mimeType: "video/mp4" });
    expect((await probeBinary(item!.binary!.output_0!)).streams.find((stream) => stream.codec_type === "video")?.width).toBe(48);
  });

  it("retries a finished task as a new task, and downloads only the outputs named", async () => {
    const [first] = await execute(action({ resource: "task", operation: "run", command: `ffmpeg -i ${clipUrl} -vf scale=32:-2 a.mp4 -vf scale=64:-2 b.mp4`, options: { pollSeconds: 0.2 } }));
    const [retried] = await execute(action({ resource: "task", operation: "retry", taskId: String(first!.json.task_id), options: { pollSeconds: 0.2 } }));
    expect(retried!.json).toMatchObject({ status: "completed", command: first!.json.command });
    expect(retried!.json.task_id).not.toBe(first!.json.task_id);
    const [downloaded] = await execute(action({ resource: "task", operation: "download", taskId: String(retried!.json.task_id), outputNames: "b.mp4", binaryPrefix: "clip" }));
    expect(Object.keys(downloaded!.binary!)).toEqual(["clip_0"]);
    expect((await probeBinary(downloaded!.binary!.clip_0!)).streams.find((stream) => stream.codec_type === "video")?.width).toBe(64);
  });

  it("names what is wrong, submitting nothing: an output the task lacks, a step reference to no output, an unknown destination, downloads of outputs sent only to a destination", async () => {
    const [task] = await execute(action({ resource: "task", operation: "run", command: `ffmpeg -i ${clipUrl} -t 0.2 -c copy one.mp4`, options: { pollSeconds: 0.2 } }));
    const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as { message: string });
    expect((await failure(execute(action({ resource: "task", operation: "download", taskId: String(task!.json.task_id), outputNames: "two.mp4" }))))?.message).toContain("no output named two.mp4");
    expect((await failure(execute(action({ resource: "task", operation: "runSteps", steps: { step: [{ command: `ffmpeg -i ${clipUrl} -t 0.2 -c copy x.mp4` }, { command: "ffmpeg -i {{steps.0.outputs.y.mp4}} z.mp4" }] } }))))?.message).toMatch(/^STEP_REFERENCE_INVALID: /);
    expect((await failure(execute(action({ resource: "task", operation: "run", command: `ffmpeg -i ${clipUrl} -t 0.2 -c copy d.mp4`, options: { destination: "nowhere" } }))))?.message).toMatch(/^DESTINATION_NOT_FOUND: /);
    const before = ((await (await fetch(`${stack.edgeUrl}/v1/tasks?limit=100`, { headers: { authorization: `Bearer ${key}` } })).json()) as { total: number }).total;
    expect((await failure(execute(action({ resource: "task", operation: "run", command: `ffmpeg -i ${clipUrl} -t 0.2 -c copy e.mp4`, options: { destination: "anywhere", destinationMode: "only", downloadOutputs: true } }))))?.message).toBe("Download Outputs needs Destination Mode Copy");
    expect(((await (await fetch(`${stack.edgeUrl}/v1/tasks?limit=100`, { headers: { authorization: `Bearer ${key}` } })).json()) as { total: number }).total).toBe(before);
  });
});
