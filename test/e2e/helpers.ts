import { afterAll, beforeAll } from "vitest";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { Stack, type StackOptions, authed, uploadLocalFile } from "../../scripts/lib/local-stack";

/** What most end-to-end files start from: a local stack, one user, and one clip uploaded as theirs. */
export interface StackWithClip {
  stack: Stack;
  /** A scratch folder for downloads and probes. */
  dir: string;
  user: { key: string; userId: string };
  clipUrl: string;
}

/**
 * Starts the stack, a user and their clip before the file's tests, and stops the stack after
 * them. The fields are filled in by the file's beforeAll, so read them inside tests only.
 */
export function useStackWithClip(clip: { seconds?: number; size?: string; audio?: boolean } = {}, options: StackOptions = {}): StackWithClip {
  const context = {} as StackWithClip;
  beforeAll(async () => {
    context.stack = await Stack.start(options);
    context.dir = await mediaDir();
    context.user = await context.stack.createUser();
    context.clipUrl = (await uploadLocalFile(context.stack, context.user.key, await makeClip(context.dir, "clip.mp4", clip))).url;
  }, 120_000);
  afterAll(async () => {
    await context.stack?.stop();
  });
  return context;
}

export type TaskBody = {
  task_id: string;
  status: string;
  progress: number;
  outputs?: { filename: string; url: string; size: number; metadata?: Record<string, unknown> }[];
  error?: string;
  error_code?: string;
};

export async function submitTask(stack: Stack, key: string, body: Record<string, unknown>): Promise<Response> {
  return stack.fetch("/v1/tasks", authed(key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
}

export async function getTask(stack: Stack, key: string, taskId: string): Promise<TaskBody> {
  return (await stack.fetch(`/v1/tasks/${taskId}`, authed(key))).json() as Promise<TaskBody>;
}

/** Polls until the task ends, recording every progress value seen while it ran. */
export async function waitForEnd(stack: Stack, key: string, taskId: string, timeoutMs = 60_000): Promise<{ task: TaskBody; progressSeen: number[]; statusesSeen: string[] }> {
  const deadline = Date.now() + timeoutMs;
  const progressSeen: number[] = [];
  const statusesSeen: string[] = [];
  while (Date.now() < deadline) {
    const task = await getTask(stack, key, taskId);
    if (statusesSeen.at(-1) !== task.status) statusesSeen.push(task.status);
    if (task.status === "running" && progressSeen.at(-1) !== task.progress) progressSeen.push(task.progress);
    if (task.status === "completed" || task.status === "failed") return { task, progressSeen, statusesSeen };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`task ${taskId} did not end within ${timeoutMs} ms`);
}

/** Registers a webhook endpoint for the file's user; its secret is in the answer only. */
export async function registerEndpoint(ctx: StackWithClip, body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const response = await ctx.stack.fetch("/v1/webhooks/endpoints", authed(ctx.user.key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
  if (response.status !== 201) throw new Error(`registering an endpoint answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as { id: string; secret: string };
}
