import { type Server, type Socket, connect, createServer } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { Stack, authed, uploadLocalFile } from "../../scripts/lib/local-stack";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { submitTask, waitForEnd } from "./helpers";

// Issue 18, items 7 and 18 on the real stack: the daily quota bounds what runs, and a task that
// did not complete leaves no outputs behind, whenever its outputs arrive.

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, failure: string): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; !(await condition()); ) {
    if (Date.now() > deadline) throw new Error(failure);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A TCP relay in front of the edge for the transcoder's callbacks (EDGE_URL) that holds the
 * request whose bytes contain `holdAt` until `release()`. A held request the transcoder gives
 * up on still reaches the edge, whole: a request in flight when the task ended.
 */
class CallbackGate {
  target = "";
  held = false;
  private releaseHeld: (() => void)[] = [];
  private readonly sockets = new Set<Socket>();
  private constructor(private readonly server: Server, readonly url: string, private readonly holdAt: string) {}

  static async start(holdAt: string): Promise<CallbackGate> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("the gate has no port");
    const gate = new CallbackGate(server, `http://127.0.0.1:${address.port}`, holdAt);
    server.on("connection", (client) => gate.carry(client));
    return gate;
  }

  private carry(client: Socket): void {
    const { hostname, port } = new URL(this.target);
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
      socket.on("error", () => {});
    }
    let holding: Buffer[] | undefined;
    const flush = () => {
      if (!holding) return;
      for (const chunk of holding) upstream.write(chunk);
      holding = undefined;
    };
    client.on("data", (chunk: Buffer) => {
      if (!holding && !this.releaseHeld.length && !this.held && chunk.toString("latin1").includes(this.holdAt)) {
        this.held = true;
        holding = [];
        this.releaseHeld.push(flush);
      }
      if (holding) holding.push(chunk);
      else upstream.write(chunk);
    });
    client.on("close", () => {
      flush();
      upstream.end();
    });
    upstream.on("data", (chunk: Buffer) => client.write(chunk));
    upstream.on("close", () => client.destroy());
  }

  release(): void {
    for (const flush of this.releaseHeld) flush();
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

describe("the daily quota on the real stack (DAILY_TASK_SECONDS=3)", () => {
  let stack: Stack;
  afterAll(() => stack?.stop());

  it("accepts one of six long tasks, stops it at the 3 s left and counts no more than that", async () => {
    stack = await Stack.start({ edgeVars: { DAILY_TASK_SECONDS: "3" } });
    const owner = await stack.createUser();
    const clip = await uploadLocalFile(stack, owner.key, await makeClip(await mediaDir(), "quota.mp4", { seconds: 20, size: "1280x720" }));
    const command = `ffmpeg -i ${clip.url} -c:v libx264 -preset slow out.mp4`;
    const responses = await Promise.all(Array.from({ length: 6 }, () => submitTask(stack, owner.key, { command })));
    expect(responses.map((response) => response.status).sort()).toEqual([201, 429, 429, 429, 429, 429]);
    const { task_id } = (await responses.find((response) => response.status === 201)!.json()) as { task_id: string };
    const { task } = await waitForEnd(stack, owner.key, task_id, 120_000);
    expect(task).toMatchObject({ status: "failed", error_code: "TIMEOUT" });
    const me = (await (await stack.fetch("/v1/me", authed(owner.key))).json()) as { remaining_credits: number; usage: { seconds_processed_today: number } };
    // The transcoder stops the job at its limit; the rest is the time its end takes to be recorded.
    expect(me.usage.seconds_processed_today).toBeLessThanOrEqual(3 + 1.5);
    expect(me.remaining_credits).toBeLessThan(1);
    expect((await submitTask(stack, owner.key, { command })).status).toBe(429);
  }, 300_000);
});

describe("outputs of a task canceled while they arrive, on the real stack", () => {
  let stack: Stack;
  let gate: CallbackGate;
  let inputUrl: string;
  beforeAll(async () => {
    gate = await CallbackGate.start("/outputs/second.mp4");
    stack = await Stack.start({ edgeVars: { EDGE_URL: gate.url } });
    gate.target = stack.edgeUrl;
    const uploader = await stack.createUser();
    inputUrl = (await uploadLocalFile(stack, uploader.key, await makeClip(await mediaDir(), "cancel.mp4", { seconds: 2 }))).url;
  }, 180_000);
  afterEach(() => gate.release());
  afterAll(async () => {
    await stack?.stop();
    await gate?.stop();
  });

  /** Where the task's outputs could still be seen: the files list, the CDN and the storage count. */
  async function traces(key: string, userId: string, taskId: string) {
    const files = (await (await stack.fetch("/api/files", authed(key))).json()) as { files: { key: string }[] };
    const served = [];
    for (const name of ["first.mp4", "second.mp4"]) {
      const response = await stack.fetch(`/outputs/${userId}/${taskId}/${name}`);
      await response.body?.cancel();
      served.push(response.status);
    }
    const me = (await (await stack.fetch("/v1/me", authed(key))).json()) as { usage: { bytes_stored: number } };
    return { listed: files.files.filter((file) => file.key.includes(taskId)).length, served, bytes: me.usage.bytes_stored };
  }

  it("lists, serves and counts none of them, and keeps none that arrive after the task was canceled and deleted", async () => {
    const { key, userId } = await stack.createUser();
    const command = `ffmpeg -i ${inputUrl} -c:v libx264 -preset ultrafast first.mp4 -c:v libx264 -preset ultrafast second.mp4`;
    const { task_id } = (await (await submitTask(stack, key, { command })).json()) as { task_id: string };
    // The first output is stored; the second is on its way when the owner cancels at 99 %.
    await until(() => gate.held, 120_000, "the second output's upload never started");
    expect(await traces(key, userId, task_id)).toMatchObject({ listed: 1, served: [200, 404] });
    expect((await stack.fetch(`/v1/tasks/${task_id}/cancel`, authed(key, { method: "POST" }))).status).toBe(200);
    expect(await traces(key, userId, task_id)).toEqual({ listed: 0, served: [404, 404], bytes: 0 });
    expect((await stack.fetch(`/v1/tasks/${task_id}`, authed(key, { method: "DELETE" }))).status).toBe(204);
    // The upload in flight, then the transcoder's last report, reach the edge after all that.
    gate.release();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(await traces(key, userId, task_id)).toEqual({ listed: 0, served: [404, 404], bytes: 0 });
    expect((await stack.fetch(`/v1/tasks/${task_id}`, authed(key))).status).toBe(404);
  }, 240_000);
});
