import { mkdtemp, rm } from "node:fs/promises";
import { type IncomingHttpHeaders, createServer as createHttpServer } from "node:http";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "@20minutes/s3rver";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FFedge, FFedgeError, type RunProgress, type Task, verifyWebhook } from "../../../clients/sdk/src/index";
import { Stack } from "../../../scripts/lib/local-stack";
import { makeClip, probe } from "../../../scripts/lib/media";

/** The SDK's workflow resources (presets, chained steps, retry, batch, destinations, webhook endpoints) against the real local stack. */
let stack: Stack;
let ff: FFedge;
let dir: string;

beforeAll(async () => {
  // Failed deliveries are retried twice, a second apart, so run() waiting for them ends quickly.
  stack = await Stack.start({ edgeVars: { DESTINATION_RETRY_SCHEDULE_SECONDS: "1,1" } });
  const { key } = await stack.createUser();
  ff = new FFedge({ apiKey: key, baseUrl: stack.edgeUrl });
  dir = await mkdtemp(join(tmpdir(), "ffedge-sdk-workflows-"));
  await makeClip(dir, "in.mp4", { seconds: 2, size: "320x240" });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<FFedgeError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(FFedgeError);
  return error as FFedgeError;
}

async function videoWidth(task: { outputs?: { url: string; filename: string }[] }): Promise<number | undefined> {
  const out = await mkdtemp(join(dir, "out-"));
  const path = await ff.download(task.outputs![0]!, out);
  return (await probe(path)).streams.find((s) => s.codec_type === "video")?.width;
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const SCALE = {
  name: "sdk-scale",
  command: "ffmpeg -i {{video}} -vf scale={{width}}:-2 -c:v libx264 -preset ultrafast scaled.mp4",
  parameters: {
    type: "object" as const,
    properties: {
      video: { type: "string" as const, examples: ["https://example.com/in.mp4"] },
      width: { type: "integer" as const, minimum: 16, maximum: 640, default: 160 },
    },
    required: ["video"],
  },
};

describe("ff.presets", () => {
  it("creates, lists after the built-ins, gets by name or id, updates, expands and deletes a preset", async () => {
    const created = await ff.presets.create(SCALE);
    expect(created).toMatchObject({ name: "sdk-scale", builtin: false, parameters: SCALE.parameters });
    expect((await failure(ff.presets.create(SCALE))).code).toBe("PRESET_NAME_TAKEN");

    const page = await ff.presets.list({ limit: 100 });
    expect(page.presets[0]!.builtin).toBe(true);
    expect(page.presets.at(-1)!.name).toBe("sdk-scale");
    expect((await ff.presets.list({ builtin: false })).presets.map((p) => p.name)).toEqual(["sdk-scale"]);
    expect((await ff.presets.get("thumbnail")).builtin).toBe(true);
    expect((await ff.presets.get(created.id)).name).toBe("sdk-scale");

    const updated = await ff.presets.update("sdk-scale", { description: "Scales a video" });
    expect(updated).toMatchObject({ id: created.id, description: "Scales a video", command: SCALE.command });
    expect((await failure(ff.presets.update("thumbnail", { description: "mine" }))).code).toBe("PRESET_READ_ONLY");

    const expanded = await ff.presets.expand("sdk-scale", { video: "https://example.com/clip.mp4", width: 320 });
    expect(expanded).toEqual({ command: expect.stringContaining("scale=320:-2"), inputs: ["https://example.com/clip.mp4"], outputs: ["scaled.mp4"] });
    const refused = await failure(ff.presets.expand("sdk-scale", { video: "https://example.com/in.mp4", width: "wide" }));
    expect(refused).toMatchObject({ status: 400, code: "PRESET_PARAMS_INVALID" });
    expect(refused.detail).toContain("params.width");

    const scratch = await ff.presets.create({ ...SCALE, name: "sdk-scratch" });
    await ff.presets.delete(scratch.id);
    expect((await failure(ff.presets.get("sdk-scratch"))).code).toBe("PRESET_NOT_FOUND");
  });

  it("runs a preset whose file parameter is a local path: uploaded first, the output has the asked width", async () => {
    const seen: RunProgress[] = [];
    const task = await ff.run({ preset: "sdk-scale", params: { video: "./in.mp4", width: 96 } }, { cwd: dir, onProgress: (p) => seen.push(p) });
    expect(task.status).toBe("completed");
    expect(seen.some((p) => p.phase === "upload" && p.file === "./in.mp4")).toBe(true);
    expect(task.command).toContain(`${stack.edgeUrl}/uploads/`);
    expect(await videoWidth(task)).toBe(96);
  });

  it("refuses a missing local path parameter before submitting anything, and a wrong type with the service's code", async () => {
    const before = (await ff.tasks.list()).total;
    expect((await failure(ff.run({ preset: "sdk-scale", params: { video: "./missing.mp4" } }, { cwd: dir }))).code).toBe("FILE_NOT_FOUND");
    const files = (await ff.files.list()).total;
    const wrong = await failure(ff.run({ preset: "sdk-scale", params: { video: "./in.mp4", width: 9000 } }, { cwd: dir }));
    expect(wrong).toMatchObject({ status: 400, code: "PRESET_PARAMS_INVALID" });
    expect((await ff.tasks.list()).total).toBe(before);
    expect((await ff.files.list()).total).toBe(files);
  });
});

describe("chained steps, retry and batch", () => {
  let chained: string;

  it("runs steps through run(): local inputs of each step uploaded, a private intermediate, every step reported", async () => {
    const task = await ff.run(
      {
        steps: [
          { command: "ffmpeg -i ./in.mp4 -t 1 -c copy cut.mp4", publish: false },
          { command: "ffmpeg -i {{steps.0.outputs.cut.mp4}} -vf scale=64:-2 -c:v libx264 -preset ultrafast tiny.mp4" },
        ],
      },
      { cwd: dir },
    );
    chained = task.task_id;
    expect(task.steps?.map((step) => [step.status, step.publish])).toEqual([["completed", false], ["completed", true]]);
    expect(task.outputs?.map((output) => output.filename)).toEqual(["tiny.mp4"]);
    expect(await videoWidth(task)).toBe(64);
  });

  it("retries a finished task as a new one that completes with the same outputs", async () => {
    const retried = await ff.tasks.retry(chained);
    expect(retried).toMatchObject({ retry_of: chained, status: "pending" });
    expect(retried.task_id).not.toBe(chained);
    const task = await ff.tasks.wait(retried.task_id);
    expect(task.status, task.error).toBe("completed");
    expect(task.outputs?.map((output) => output.filename)).toEqual(["tiny.mp4"]);
    expect((await failure(ff.tasks.retry("tsk_000000000000000000000000"))).code).toBe("NOT_FOUND");
  });

  it("submits a batch where refused items carry their codes and do not block the others; a repeat with the key creates nothing", async () => {
    const { url } = await ff.files.upload(join(dir, "in.mp4"));
    const items = [
      `ffmpeg -i ${url} -t 1 -c copy first.mp4`,
      { command: `ffmpeg -re -i ${url} second.mp4` },
      { preset: "sdk-scale", params: { video: url, width: "wide" } },
      { preset: "thumbnail", params: { video: url, width: 80 } },
    ];
    const idempotencyKey = crypto.randomUUID();
    const batch = await ff.tasks.batch(items, { idempotencyKey });
    expect(batch).toMatchObject({ created: 2, refused: 2 });
    const [first, second, third, fourth] = batch.results;
    expect(second).toMatchObject({ index: 1, error: { code: "OPTION_NOT_ALLOWED" } });
    expect(third).toMatchObject({ index: 2, error: { code: "PRESET_PARAMS_INVALID" } });
    if (!first || "error" in first || !fourth || "error" in fourth) throw new Error(`items 0 and 3 should be created: ${JSON.stringify(batch.results)}`);
    expect(await ff.tasks.batch(items, { idempotencyKey })).toEqual(batch);
    for (const created of [first, fourth]) expect((await ff.tasks.wait(created.task_id)).status).toBe("completed");
    expect((await ff.tasks.get(fourth.task_id)).outputs?.map((output) => output.filename)).toEqual(["thumbnail.jpg"]);
  });
});

describe("ff.destinations", () => {
  it("saves a destination (secret never returned), lists, updates, refuses an unreachable test, and deletes it", async () => {
    const endpoint = `http://127.0.0.1:${await closedPort()}`;
    const created = await ff.destinations.create({ name: "sdk-bucket", type: "s3", endpoint, region: "us-east-1", bucket: "media", access_key_id: "AKIDSDKTEST", secret_access_key: "very-secret-key" });
    expect(created).toMatchObject({ name: "sdk-bucket", endpoint, bucket: "media", prefix: "", path_style: true });
    expect(JSON.stringify(created)).not.toContain("very-secret-key");
    expect(created.credentials_fingerprint).toMatch(/^AKID/);
    expect((await ff.destinations.list()).map((d) => d.id)).toEqual([created.id]);
    expect((await ff.destinations.update("sdk-bucket", { prefix: "renders/" })).prefix).toBe("renders/");
    expect((await ff.destinations.get(created.id)).prefix).toBe("renders/");

    const unreachable = await failure(ff.destinations.test("sdk-bucket"));
    expect(unreachable).toMatchObject({ status: 502, code: "DESTINATION_UNREACHABLE" });
    expect((await failure(ff.destinations.create({ name: "sdk-bucket", type: "s3", endpoint, region: "us-east-1", bucket: "media", access_key_id: "a", secret_access_key: "b" }))).code).toBe("DESTINATION_NAME_TAKEN");

    await ff.destinations.delete("sdk-bucket");
    expect((await failure(ff.destinations.get(created.id))).status).toBe(404);
    expect(await ff.destinations.list()).toEqual([]);
  });

  it("run() with a destination resolves once delivered (copy keeps ffedge's URL, only gives the bucket's, which download() reads)", async () => {
    const s3Dir = await mkdtemp(join(tmpdir(), "ffedge-sdk-s3-"));
    const s3 = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: s3Dir, configureBuckets: [{ name: "sdk-media" }] });
    try {
      const endpoint = `http://127.0.0.1:${((await s3.run()) as AddressInfo).port}`;
      const destination = await ff.destinations.create({ name: "sdk-s3", type: "s3", endpoint, region: "us-east-1", bucket: "sdk-media", prefix: "out/", access_key_id: "S3RVER", secret_access_key: "S3RVER" });
      expect(await ff.destinations.test("sdk-s3")).toMatchObject({ ok: true });
      const seen: RunProgress[] = [];
      const task = await ff.run("ffmpeg -i ./in.mp4 -t 1 -c copy cut.mp4", { cwd: dir, destination: { id: "sdk-s3" }, onProgress: (p) => seen.push(p) });
      expect(seen.filter((p) => p.phase === "delivery").at(-1)).toEqual({ phase: "delivery", task_id: task.task_id, pending: 0, total: 1 });
      const output = task.outputs![0]!;
      expect(output.destination).toMatchObject({ id: destination.id, status: "delivered", key: `out/${task.task_id}/cut.mp4` });
      expect(output.url).not.toBe(output.destination!.url);
      expect((await failure(ff.tasks.retryDeliveries(task.task_id))).code).toBe("NOTHING_TO_REDELIVER");

      // only: run() resolves once delivered; the output's url is the bucket's, and download() reads it from there.
      const only = await ff.run("ffmpeg -i ./in.mp4 -t 1 -c copy moved.mp4", { cwd: dir, destination: { id: "sdk-s3", mode: "only" } });
      const moved = only.outputs![0]!;
      expect(moved.destination).toMatchObject({ status: "delivered", key: `out/${only.task_id}/moved.mp4` });
      expect(moved.url).toBe(moved.destination!.url);
      expect(moved.url.startsWith(endpoint)).toBe(true);
      const out = await mkdtemp(join(dir, "only-"));
      expect((await probe(await ff.download(moved, out))).format.duration).toBeDefined();
      // An object the bucket does not serve (here: removed from it) is OUTPUT_AT_DESTINATION, not a 404 from ffedge.
      const gone = `${moved.url}.removed`;
      const unreadable = await failure(ff.download({ ...moved, url: gone, destination: { ...moved.destination!, url: gone } }, out));
      expect(unreadable).toMatchObject({ status: 0, code: "OUTPUT_AT_DESTINATION" });
      expect(unreadable.detail).toContain(`moved.mp4 was delivered only to destination ${destination.id}`);
      await ff.destinations.delete("sdk-s3");
    } finally {
      await s3.close();
      await rm(s3Dir, { recursive: true, force: true });
    }
  });
});

describe("run() refusals and failed deliveries", () => {
  it("a refused submission rejects with the service's problem unchanged and deletes the files the run uploaded", async () => {
    const files = (await ff.files.list()).total;
    const refused = await failure(ff.run("ffmpeg -i ./in.mp4 -t 1 -c copy nowhere.mp4", { cwd: dir, destination: { id: "sdk-nosuch" } }));
    expect(refused).toMatchObject({ status: 400, code: "DESTINATION_NOT_FOUND" });
    const chained = await failure(ff.run({ steps: [{ command: "ffmpeg -i ./in.mp4 -t 1 a.mp4" }, { command: "ffmpeg -i {{steps.0.outputs.zz.mp4}} b.mp4" }] }, { cwd: dir }));
    expect(chained).toMatchObject({ status: 400, code: "STEP_REFERENCE_INVALID" });
    expect((await ff.files.list()).total).toBe(files);
  });

  it("a run that fails part-way through its uploads deletes the ones already made", async () => {
    const files = (await ff.files.list()).total;
    // The first parameter is uploaded, then the second names no file.
    const failed = await failure(ff.run({ preset: "sdk-scale", params: { video: "./in.mp4", logo: "./missing.png" } }, { cwd: dir }));
    expect(failed.code).toBe("FILE_NOT_FOUND");
    const steps = await failure(ff.run({ steps: [{ command: "ffmpeg -i ./in.mp4 -t 1 a.mp4" }, { command: "ffmpeg -i ./missing.mp4 b.mp4" }] }, { cwd: dir }));
    expect(steps.code).toBe("FILE_NOT_FOUND");
    expect((await ff.files.list()).total).toBe(files);
  });

  it("rejects with DELIVERY_FAILED naming the output and its code once the retries to an unreachable bucket are spent", async () => {
    await ff.destinations.create({ name: "sdk-down", type: "s3", endpoint: `http://127.0.0.1:${await closedPort()}`, region: "us-east-1", bucket: "media", access_key_id: "AKIDDOWN", secret_access_key: "secret" });
    const error = await failure(ff.run("ffmpeg -i ./in.mp4 -t 1 -c copy lost.mp4", { cwd: dir, destination: { id: "sdk-down", mode: "only" } }));
    expect(error).toMatchObject({ status: 0, code: "DELIVERY_FAILED" });
    expect(error.detail).toContain("lost.mp4: DESTINATION_UNREACHABLE");
    const task = (error.problem as { task?: Task }).task!;
    expect(task.status).toBe("completed");
    expect(task.outputs![0]!.destination?.status).toBe("failed");
    // An output whose `only` delivery failed keeps its copy here, so it still downloads.
    const out = await mkdtemp(join(dir, "kept-"));
    expect((await probe(await ff.download(task.outputs![0]!, out))).format.duration).toBeDefined();
    await ff.destinations.delete("sdk-down");
  });
});

describe("ff.webhookEndpoints", () => {
  it("registers an endpoint (secret shown once), updates it, rotates its secret, reads its log and deletes it", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/ffedge`;
    const created = await ff.webhookEndpoints.create({ url, events: ["file.expired"], description: "sdk test" });
    expect(created).toMatchObject({ url, events: ["file.expired"], enabled: true, secret: expect.stringMatching(/^whsec_/) });
    const read = await ff.webhookEndpoints.get(created.id);
    expect(read).not.toHaveProperty("secret");
    expect((await ff.webhookEndpoints.list()).map((endpoint) => endpoint.id)).toEqual([created.id]);
    expect(await ff.webhookEndpoints.update(created.id, { enabled: false, events: ["task.failed"] })).toMatchObject({ enabled: false, events: ["task.failed"] });

    const rotated = await ff.webhookEndpoints.rotateSecret(created.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(created.secret);
    expect(await ff.webhookEndpoints.deliveries(created.id)).toEqual([]);
    expect((await failure(ff.webhookEndpoints.redeliver(created.id, "msg_unknown"))).code).toBe("NOT_FOUND");
    expect((await failure(ff.webhookEndpoints.create({ url: "ftp://example.com/x", events: ["task.completed"] }))).status).toBe(400);

    await ff.webhookEndpoints.delete(created.id);
    expect((await failure(ff.webhookEndpoints.get(created.id))).code).toBe("NOT_FOUND");
  });

  it("an endpoint's deliveries verify with the secret create() returned", async () => {
    const received: { body: string; headers: IncomingHttpHeaders }[] = [];
    const server = createHttpServer((req, res) => {
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", () => {
        received.push({ body, headers: req.headers });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const endpoint = await ff.webhookEndpoints.create({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, events: ["task.completed"] });
      const task = await ff.run("ffmpeg -i ./in.mp4 -t 1 -c copy hooked.mp4", { cwd: dir });
      for (let tries = 0; !received.some((r) => r.body.includes(task.task_id)) && tries < 120; tries++) await new Promise((resolve) => setTimeout(resolve, 250));
      const delivery = received.find((r) => r.body.includes(task.task_id));
      expect(delivery?.headers["webhook-event"]).toBe("task.completed");
      const event = await verifyWebhook(delivery!.body, delivery!.headers as Record<string, string>, endpoint.secret);
      expect(event).toMatchObject({ task_id: task.task_id, status: "completed" });
      await expect(verifyWebhook(delivery!.body, delivery!.headers as Record<string, string>, (await ff.webhookEndpoints.rotateSecret(endpoint.id)).secret)).rejects.toMatchObject({ code: "WEBHOOK_SIGNATURE_INVALID" });
      expect((await ff.webhookEndpoints.deliveries(endpoint.id)).map((logged) => [logged.task_id, logged.delivered])).toContainEqual([task.task_id, true]);
      await ff.webhookEndpoints.delete(endpoint.id);
    } finally {
      server.close();
    }
  });
});
