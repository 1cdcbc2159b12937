import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { Stack, authed, uploadLocalFile } from "../../scripts/lib/local-stack";
import { type TaskBody, getTask, submitTask, waitForEnd } from "./helpers";
import { WebhookReceiver } from "./webhook-receiver";

// A canceled task keeps FFHub's statuses (failed, error_code CANCELED, plus canceled_at), its
// log and its webhook, on the real stack: workerd, a transcoder and ffmpeg.
type Canceled = TaskBody & { canceled_at?: string; finished_at: string | null; started_at: string | null };

let stack: Stack;
let receiver: WebhookReceiver;
let user: { key: string; userId: string };
let longClipUrl: string;
let shortClipUrl: string;

beforeAll(async () => {
  stack = await Stack.start({ edgeVars: { MAX_RUNNING_TASKS_PER_USER: "1" } });
  receiver = await new WebhookReceiver().listen();
  user = await stack.createUser();
  const dir = await mediaDir();
  longClipUrl = (await uploadLocalFile(stack, user.key, await makeClip(dir, "long.mp4", { seconds: 30, size: "1280x720" }))).url;
  shortClipUrl = (await uploadLocalFile(stack, user.key, await makeClip(dir, "short.mp4", { seconds: 2 }))).url;
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

async function submitted(command: string, webhook?: string): Promise<string> {
  const response = await submitTask(stack, user.key, { command, ...(webhook ? { webhook } : {}) });
  expect(response.status).toBe(201);
  return ((await response.json()) as { task_id: string }).task_id;
}

/** Waits until ffmpeg has reported progress: it is running and has written to its log. */
async function untilProgress(taskId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await getTask(stack, user.key, taskId)).progress <= 0) {
    if (Date.now() > deadline) throw new Error(`task ${taskId} reported no progress`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Reads the task's log until `done` holds: ffmpeg's own log comes with the transcoder's last report, after the cancel. */
async function logUntil(taskId: string, done: (text: string) => boolean): Promise<{ status: number; text: string }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const response = await stack.fetch(`/v1/tasks/${taskId}/logs`, authed(user.key));
    const result = { status: response.status, text: await response.text() };
    if (done(result.text) || Date.now() > deadline) return result;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("a task canceled while ffmpeg runs", () => {
  let taskId: string;
  let webhookPath: string;

  beforeAll(async () => {
    webhookPath = `/canceled-${Date.now()}`;
    taskId = await submitted(`ffmpeg -i ${longClipUrl} -c:v libx264 -preset veryslow stopped.mp4`, receiver.url(webhookPath));
    await untilProgress(taskId);
    const response = await stack.fetch(`/v1/tasks/${taskId}/cancel`, authed(user.key, { method: "POST" }));
    expect(response.status).toBe(200);
  }, 90_000);

  it("shows status failed, error_code CANCELED and canceled_at, to its owner and to a request without a key", async () => {
    const task = (await getTask(stack, user.key, taskId)) as Canceled;
    expect(task).toMatchObject({ status: "failed", error_code: "CANCELED" });
    expect(task.canceled_at).toBe(task.finished_at);
    const keyless = (await (await stack.fetch(`/v1/tasks/${taskId}`)).json()) as Canceled;
    expect(keyless).toMatchObject({ status: "failed", error_code: "CANCELED", canceled_at: task.canceled_at });
  });

  it("keeps what ffmpeg wrote until it was stopped, ending with why", async () => {
    const log = await logUntil(taskId, (text) => text.includes("ffmpeg was stopped"));
    expect(log.status).toBe(200);
    expect(log.text).toMatch(/Input #0, mov,mp4/);
    expect(log.text).toMatch(/Output #0, mp4, to 'stopped\.mp4'/);
    expect(log.text.trimEnd().split("\n").at(-1)).toBe("[ffedge] ffmpeg was stopped: The task was canceled.");
    expect(log.text).not.toContain("/tmp/");
  });

  it("sends its webhook with status failed, error_code CANCELED and canceled_at", async () => {
    const deadline = Date.now() + 30_000;
    while (receiver.received(webhookPath).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    const body = JSON.parse(receiver.received(webhookPath)[0]!.body) as Canceled;
    expect(body).toMatchObject({ task_id: taskId, status: "failed", error_code: "CANCELED" });
    expect(typeof body.canceled_at).toBe("string");
  });
});

describe("a task canceled before it started", () => {
  it("has a log saying ffmpeg never ran, not a 404, and never starts", async () => {
    const blocker = await submitted(`ffmpeg -i ${shortClipUrl} -c:v libx264 -preset slow blocker.mp4`);
    const waiting = await submitted(`ffmpeg -i ${shortClipUrl} -t 1 -c copy waiting.mp4`);
    expect((await stack.fetch(`/v1/tasks/${waiting}/cancel`, authed(user.key, { method: "POST" }))).status).toBe(200);
    const log = await stack.fetch(`/v1/tasks/${waiting}/logs`, authed(user.key));
    expect(log.status).toBe(200);
    expect(await log.text()).toBe("[ffedge] The task was canceled before it started; ffmpeg never ran.\n");
    await waitForEnd(stack, user.key, blocker, 90_000);
    expect((await getTask(stack, user.key, waiting)) as Canceled).toMatchObject({ status: "failed", error_code: "CANCELED", started_at: null });
  });
});

describe("GET /v1/tasks?status=", () => {
  it("lists canceled tasks alone under canceled, among the failed under failed, and not under completed", async () => {
    const done = await submitted(`ffmpeg -i ${shortClipUrl} -t 1 -c copy listed.mp4`);
    expect((await waitForEnd(stack, user.key, done, 90_000)).task.status).toBe("completed");
    const ids = async (status: string) => {
      const body = (await (await stack.fetch(`/v1/tasks?status=${status}&limit=100`, authed(user.key))).json()) as { total: number; tasks: Canceled[] };
      return body.tasks;
    };
    const canceled = await ids("canceled");
    expect(canceled.length).toBe(2);
    expect(canceled.every((task) => task.status === "failed" && task.error_code === "CANCELED" && task.canceled_at)).toBe(true);
    const failedIds = (await ids("failed")).map((task) => task.task_id);
    for (const task of canceled) expect(failedIds).toContain(task.task_id);
    expect((await ids("completed")).map((task) => task.task_id)).toContain(done);
    expect((await ids("completed")).some((task) => task.canceled_at)).toBe(false);
  });
});
