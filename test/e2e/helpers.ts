import { type Stack, authed } from "../../scripts/lib/local-stack";

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
