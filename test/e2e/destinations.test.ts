import { mkdtemp, rm } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "@20minutes/s3rver";
import { AwsClient } from "aws4fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authed } from "../../scripts/lib/local-stack";
import { type TaskBody, getTask, submitTask, useStackWithClip, waitForEnd } from "./helpers";

/** s3rver's built-in account: the only key pair whose signatures it accepts. */
const S3RVER_KEY = "S3RVER";
const BUCKET = "user-media";

type Delivered = Omit<TaskBody, "outputs"> & { outputs?: (NonNullable<TaskBody["outputs"]>[number] & { destination?: { id: string; status: string; key: string; url?: string; attempts: number; error_code?: string } })[] };

// Three attempts a second apart, so a refused delivery is given up within the test.
const ctx = useStackWithClip({ seconds: 3, size: "320x240" }, { edgeVars: { DESTINATION_RETRY_SCHEDULE_SECONDS: "1,1" } });
let s3: S3rver;
let s3Dir: string;
let endpoint: string;

beforeAll(async () => {
  s3Dir = await mkdtemp(join(tmpdir(), "ffedge-destination-"));
  s3 = new S3rver({ address: "127.0.0.1", port: 0, silent: true, directory: s3Dir, configureBuckets: [{ name: BUCKET }] });
  endpoint = `http://127.0.0.1:${((await s3.run()) as AddressInfo).port}`;
});

afterAll(async () => {
  await s3?.close();
  if (s3Dir) await rm(s3Dir, { recursive: true, force: true });
});

function post(path: string, body: unknown): Promise<Response> {
  return ctx.stack.fetch(path, authed(ctx.user.key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
}

const bucketOwner = new AwsClient({ accessKeyId: S3RVER_KEY, secretAccessKey: S3RVER_KEY, service: "s3", region: "us-east-1" });

/** The object at `url` read from the S3 server with a SigV4-signed GET, as the bucket's owner would. */
async function readObject(url: string): Promise<Uint8Array> {
  const response = await bucketOwner.fetch(url);
  expect(response.status, url).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
}

/** Polls the task until none of its outputs waits for its delivery. */
async function waitForDeliveries(taskId: string): Promise<Delivered> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const task = (await getTask(ctx.stack, ctx.user.key, taskId)) as Delivered;
    if (task.outputs?.every((output) => output.destination && output.destination.status !== "pending")) return task;
    if (Date.now() > deadline) throw new Error(`deliveries of ${taskId} still pending: ${JSON.stringify(task.outputs)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe("outputs delivered to the user's own S3-compatible bucket", () => {
  let destinationId: string;
  /** Where the CDN serves outputs, up to the task id. */
  let cdnOutputs: string;
  /** The task whose outputs were copied to the bucket. */
  let copiedTaskId: string;

  /** Every output of the task is in the bucket under `ffedge/<task id>/`, byte for byte what the CDN serves. */
  async function expectDelivered(task: Delivered, attempts: number): Promise<void> {
    for (const output of task.outputs!) {
      expect(output.destination).toMatchObject({ id: destinationId, status: "delivered", key: `ffedge/${task.task_id}/${output.filename}`, attempts });
      const delivered = await readObject(output.destination!.url!);
      const ours = new Uint8Array(await (await fetch(output.url)).arrayBuffer());
      expect(delivered.byteLength).toBe(output.size);
      expect(Buffer.from(delivered).equals(Buffer.from(ours))).toBe(true);
    }
  }

  it("saves a destination without returning its secret, and its test writes and deletes a probe", async () => {
    const created = await post("/v1/destinations", { name: "local-bucket", type: "s3", endpoint, region: "us-east-1", bucket: BUCKET, prefix: "ffedge/", access_key_id: S3RVER_KEY, secret_access_key: S3RVER_KEY });
    const text = await created.text();
    expect(created.status, text).toBe(201);
    expect(text).not.toContain("secret_access_key");
    destinationId = (JSON.parse(text) as { id: string }).id;
    const tested = await post(`/v1/destinations/${destinationId}/test`, {});
    expect(tested.status, await tested.clone().text()).toBe(200);
  });

  it("lists destinations a page at a time with their total, and refuses plain http to a public host", async () => {
    const listed = await ctx.stack.fetch("/v1/destinations?limit=1", authed(ctx.user.key));
    expect(await listed.json()).toMatchObject({ total: 1, destinations: [{ id: destinationId, name: "local-bucket" }] });
    const refused = await post("/v1/destinations", { name: "clear-text", type: "s3", endpoint: "http://s3.amazonaws.com", region: "us-east-1", bucket: BUCKET, access_key_id: S3RVER_KEY, secret_access_key: S3RVER_KEY });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { code: string }).code).toBe("URL_NOT_ALLOWED");
  });

  it("copies a task's outputs there: the task says where each went, and the bytes are the CDN's", async () => {
    const response = await submitTask(ctx.stack, ctx.user.key, { command: `ffmpeg -i ${ctx.clipUrl} -t 1 -c copy cut.mp4 -t 1 -vn -c:a libmp3lame sound.mp3`, destination: { id: "local-bucket", mode: "copy" } });
    expect(response.status, await response.clone().text()).toBe(201);
    const { task_id } = (await response.json()) as { task_id: string };
    expect((await waitForEnd(ctx.stack, ctx.user.key, task_id)).task.status).toBe("completed");
    const task = await waitForDeliveries(task_id);
    cdnOutputs = task.outputs![0]!.url.slice(0, task.outputs![0]!.url.indexOf(`/${task_id}/`));
    await expectDelivered(task, 1);
    copiedTaskId = task_id;
  });

  it("retries that task as a new one that delivers to the same destination again", async () => {
    const response = await post(`/v1/tasks/${copiedTaskId}/retry`, {});
    expect(response.status, await response.clone().text()).toBe(201);
    const { task_id } = (await response.json()) as { task_id: string };
    expect((await waitForEnd(ctx.stack, ctx.user.key, task_id)).task.status).toBe("completed");
    const task = await waitForDeliveries(task_id);
    expect((task as Delivered & { destination?: unknown }).destination).toEqual({ id: destinationId, mode: "copy" });
    expect(task.outputs!.map((output) => output.filename).sort()).toEqual(["cut.mp4", "sound.mp3"]);
    await expectDelivered(task, 1);
  });

  it("gives up the deliveries to a bucket that does not exist yet, each output after its attempts, and redelivers them once the bucket is made", async () => {
    const created = await post("/v1/destinations", { name: "later-bucket", type: "s3", endpoint, region: "us-east-1", bucket: "made-later", prefix: "ffedge/", access_key_id: S3RVER_KEY, secret_access_key: S3RVER_KEY });
    expect(created.status, await created.clone().text()).toBe(201);
    const later = (await created.json()) as { id: string };
    const response = await submitTask(ctx.stack, ctx.user.key, { command: `ffmpeg -i ${ctx.clipUrl} -t 1 -c copy later.mp4 -t 1 -c copy later2.mp4`, destination: { id: "later-bucket" } });
    const { task_id } = (await response.json()) as { task_id: string };
    expect((await waitForEnd(ctx.stack, ctx.user.key, task_id)).task.status).toBe("completed");
    const refused = (await waitForDeliveries(task_id)).outputs!;
    expect(refused.map((output) => output.filename)).toEqual(["later.mp4", "later2.mp4"]);
    for (const output of refused) {
      expect(output.destination, output.filename).toMatchObject({ id: later.id, status: "failed", attempts: 3, error_code: "DESTINATION_REFUSED" });
      expect((output.destination as { error?: string }).error).toContain("NoSuchBucket");
    }
    const made = await bucketOwner.fetch(`${endpoint}/made-later`, { method: "PUT" });
    expect(made.status, await made.text()).toBe(200);

    const redelivery = await post(`/v1/tasks/${task_id}/deliveries/retry`, {});
    expect(redelivery.status, await redelivery.clone().text()).toBe(202);
    expect(await redelivery.json()).toEqual({
      task_id,
      queued: ["later.mp4", "later2.mp4"].map((filename) => ({ filename, destination: { id: later.id, status: "pending", key: `ffedge/${task_id}/${filename}`, attempts: 0 } })),
    });
    for (const output of (await waitForDeliveries(task_id)).outputs!) {
      expect(output.destination, output.filename).toMatchObject({ status: "delivered", attempts: 1 });
      const delivered = await readObject(output.destination!.url!);
      expect(Buffer.from(delivered).equals(Buffer.from(await (await fetch(output.url)).arrayBuffer()))).toBe(true);
    }
    const again = await post(`/v1/tasks/${task_id}/deliveries/retry`, {});
    expect(again.status).toBe(409);
    expect(((await again.json()) as { code: string }).code).toBe("NOTHING_TO_REDELIVER");
  });

  it("with `only`, the output's url is the bucket's and the CDN copy is gone", async () => {
    const response = await submitTask(ctx.stack, ctx.user.key, { command: `ffmpeg -i ${ctx.clipUrl} -t 1 -c copy only.mp4`, destination: { id: destinationId, mode: "only" } });
    const { task_id } = (await response.json()) as { task_id: string };
    expect((await waitForEnd(ctx.stack, ctx.user.key, task_id)).task.status).toBe("completed");
    const task = await waitForDeliveries(task_id);
    const output = task.outputs![0]!;
    expect(output.destination!.status).toBe("delivered");
    expect(output.url).toBe(output.destination!.url);
    expect(output.url.startsWith(`${endpoint}/${BUCKET}/ffedge/${task_id}/`)).toBe(true);
    expect((await readObject(output.url)).byteLength).toBe(output.size);
    expect((await fetch(`${cdnOutputs}/${task_id}/only.mp4`)).status).toBe(404);
  });
});
