import { type Server, type Socket, connect, createServer } from "node:net";
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Stack, uploadLocalFile, authed } from "../../scripts/lib/local-stack";
import { mediaDir } from "../../scripts/lib/media";
import { type TaskBody, getTask, submitTask, waitForEnd } from "./helpers";
import { throttledLink } from "./relay";

// Faults that used to lose or strand work (issue 18, items 13-15), on the real stack: a paused
// transcoder, an edge the transcoder cannot reach while its encodes finish, a graceful
// transcoder stop and a cancel during a slow download. Windows are shortened by configuration
// (HEARTBEAT_TIMEOUT_SECONDS, SHUTDOWN_GRACE_SECONDS) so the file takes about two minutes.

type Task = TaskBody & { retries: number };

/**
 * The transcoder's way back to the edge (EDGE_URL, which its callbacks use), with a switch:
 * while down, every connection is reset at once and open ones are cut, as when the edge is
 * unreachable. The edge's own port stays up, so it keeps probing the transcoder.
 */
class CallbackLink {
  target = "";
  down = false;
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<CallbackLink> {
    const server = createServer();
    const link = new CallbackLink(server);
    server.on("connection", (client) => link.carry(client));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return link;
  }

  get url(): string {
    const address = this.server.address();
    if (!address || typeof address === "string") throw new Error("the link has no port");
    return `http://127.0.0.1:${address.port}`;
  }

  cut(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private carry(client: Socket): void {
    if (this.down || !this.target) return void client.resetAndDestroy();
    const { hostname, port } = new URL(this.target);
    const upstream = connect(Number(port), hostname);
    for (const [from, to] of [[client, upstream], [upstream, client]] as const) {
      this.sockets.add(from);
      from.pipe(to);
      from.on("close", () => {
        this.sockets.delete(from);
        to.destroy();
      });
      from.on("error", () => to.destroy());
    }
  }
}

/** The transcoder's JSON log lines (Fastify's request log included). */
function logLines(stack: Stack): Record<string, unknown>[] {
  return stack.transcoders[0]!.logs.join("").split("\n").flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, failure: string): Promise<T> {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(failure);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Starts a fault, holds it for `ms` and ends it, whatever happens meanwhile. */
async function holdFault(ms: number, begin: () => void, end: () => void): Promise<void> {
  begin();
  try {
    await new Promise((resolve) => setTimeout(resolve, ms));
  } finally {
    end();
  }
}

async function submitted(stack: Stack, key: string, command: string): Promise<string> {
  const response = await submitTask(stack, key, { command });
  expect(response.status).toBe(201);
  return ((await response.json()) as { task_id: string }).task_id;
}

/** The task once its status is one of `statuses`; `seen` keeps the last state read, for the failure message. */
function statusIn(stack: Stack, key: string, taskId: string, statuses: string[], seen: { task?: Task } = {}) {
  return async () => {
    seen.task = (await getTask(stack, key, taskId)) as Task;
    return statuses.includes(seen.task.status) ? seen.task : undefined;
  };
}

describe("faults that used to lose or strand work", () => {
  let stack: Stack;
  let link: CallbackLink;
  let key: string;
    /** 10 s of raw 320x240 video (29 MB): through a throttled link, a download that lasts. */
  let rawUrl: string;
  let dir: string;
  beforeAll(async () => {
    link = await CallbackLink.start();
    stack = await Stack.start({
      edgeVars: { EDGE_URL: link.url, HEARTBEAT_TIMEOUT_SECONDS: "10" },
      transcoderEnv: { SHUTDOWN_GRACE_SECONDS: "1" },
    });
    link.target = stack.edgeUrl;
    ({ key } = await stack.createUser());
    dir = await mediaDir();
    const raw = join(dir, "raw.mkv");
    await promisify(execFile)("ffmpeg", ["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=25:duration=10", "-c:v", "rawvideo", "-pix_fmt", "yuv420p", raw]);
    rawUrl = (await uploadLocalFile(stack, key, raw, "video/x-matroska")).url;
  }, 180_000);
  afterAll(async () => {
    await stack?.stop();
    await link?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** A job that spends its first seconds downloading its input through `link`. */
  const slowJob = (link: { url: string }) => `ffmpeg -i ${rawUrl.replace(stack.edgeUrl, link.url)} -t 2 -c:v libx264 -preset ultrafast out.mp4`;

  it("completes a task whose transcoder hung for 18 s: the retry sent to it once it wakes is taken, not refused", async () => {
    const slow = await throttledLink(stack.edgeUrl, 6_000_000);
    try {
      const taskId = await submitted(stack, key, slowJob(slow));
      await waitFor(statusIn(stack, key, taskId, ["running"]), 60_000, "the task never ran");
      const pid = stack.transcoders[0]!.process.pid!;
      // Past the edge's probe (15 s): it gives the silent run up and sends the next one.
      await holdFault(18_000, () => process.kill(pid, "SIGSTOP"), () => process.kill(pid, "SIGCONT"));
      const { task } = await waitForEnd(stack, key, taskId, 120_000);
      expect(task.status, task.error).toBe("completed");
      expect((task as Task).retries).toBeGreaterThanOrEqual(1);
    } finally {
      await slow.stop();
    }
  }, 300_000);

  it("keeps encodes that finish while the transcoder cannot reach the edge for 30 s, three times its heartbeat timeout", async () => {
    // Each input takes about 5 s to arrive, so every encode ends inside the outage.
    const slow = await throttledLink(stack.edgeUrl, 6_000_000);
    try {
      const taskIds = await Promise.all([1, 2, 3].map(() => submitted(stack, key, slowJob(slow))));
      await Promise.all(taskIds.map((taskId) => waitFor(statusIn(stack, key, taskId, ["running"]), 60_000, `task ${taskId} never ran`)));
      await holdFault(30_000, () => link.cut(), () => (link.down = false));
      for (const taskId of taskIds) {
        const { task } = await waitForEnd(stack, key, taskId, 120_000);
        expect(task.status, task.error).toBe("completed");
        // The encode that finished during the outage is the one kept: nothing ran again.
        expect((task as Task).retries).toBe(0);
      }
    } finally {
      await slow.stop();
    }
  }, 300_000);

  it("cancels a task during a slow input download at once: the edge's DELETE is taken, not refused as broken JSON", async () => {
    const slow = await throttledLink(stack.edgeUrl, 500_000);
    try {
      const taskId = await submitted(stack, key, slowJob(slow));
      await waitFor(() => (slow.delivered > 500_000 ? true : undefined), 120_000, "the input download never started");
      const asked = Date.now();
      const cancel = await stack.fetch(`/v1/tasks/${taskId}/cancel`, authed(key, { method: "POST" }));
      expect(cancel.status).toBe(200);
      const finished = await waitFor(() => logLines(stack).find((line) => line.task_id === taskId && line.msg === "job finished"), 10_000, "the transcoder never stopped the job");
      expect(Date.now() - asked).toBeLessThan(4_000);
      expect(finished).toMatchObject({ outcome: "failed", error_code: "CANCELED" });
      const deleted = logLines(stack).find((line) => line.msg === "incoming request" && (line.req as { method?: string; url?: string } | undefined)?.method === "DELETE" && (line.req as { url: string }).url.includes(taskId));
      expect(deleted, "the edge sent no DELETE").toBeDefined();
      const answered = logLines(stack).find((line) => line.msg === "request completed" && line.reqId === deleted!.reqId);
      expect(answered).toMatchObject({ res: { statusCode: 202 } });
      expect((await getTask(stack, key, taskId)).error_code).toBe("CANCELED");
    } finally {
      await slow.stop();
    }
  }, 240_000);

  it("hands a task back when its transcoder is stopped gracefully: started again, not failed, and completed once a transcoder is back", async () => {
    // Still downloading its input when the transcoder stops.
    const slow = await throttledLink(stack.edgeUrl, 500_000);
    const taskId = await submitted(stack, key, slowJob(slow));
    await waitFor(statusIn(stack, key, taskId, ["running"]), 120_000, "the task never ran");
    const transcoder = stack.transcoders[0]!;
    const exited = new Promise((resolve) => transcoder.process.once("exit", resolve));
    transcoder.process.kill("SIGTERM");
    await exited;
    // Handed back at once (grace 1 s), not after a heartbeat timeout, and not failed.
    const seen: { task?: Task } = {};
    const handedBack = await waitFor(statusIn(stack, key, taskId, ["pending"], seen), 5_000, "the task was not handed back").catch((error: Error) => {
      throw new Error(`${error.message}: ${JSON.stringify(seen.task)}\n${logLines(stack).filter((line) => JSON.stringify(line).includes(taskId)).map((line) => JSON.stringify(line)).join("\n")}`);
    });
    expect(handedBack.error_code ?? null).toBeNull();
    slow.release();
    await stack.restartTranscoder();
    try {
      const { task } = await waitForEnd(stack, key, taskId, 120_000);
      expect(task.status, task.error).toBe("completed");
    } finally {
      await slow.stop();
    }
  }, 300_000);
});
