import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { CreateDestinationSchema } from "../../../shared/schemas/destinations";
import type { Task } from "../../../shared/schemas/tasks";
import { createDestination } from "../../../edge/destinations/manage";
import { taskStub } from "../../../edge/lib/stubs";
import { storeOutput } from "../../../edge/tasks/outputs";
import { presentTask } from "../../../edge/tasks/present";
import { acceptReport } from "../../../edge/tasks/reports";
import { findTaskById } from "../../../edge/tasks/repository";
import { submitTask } from "../../../edge/tasks/submit";
import { createUser } from "../helpers";
import { destinationBody } from "./fixtures";

/** Tasks delivering to a destination on the tests' S3 server, driven through their object's alarm. */

export const CONTENT = "not really a video, but bytes all the same\n".repeat(200);

/** A task of a fresh user naming a new destination, completed with one output stored in R2. */
export async function completedTask(mode: "copy" | "only", overrides: Record<string, unknown> = {}) {
  const { userId, key } = await createUser();
  const destination = await createDestination(env, userId, CreateDestinationSchema.parse(destinationBody(overrides)));
  const { task_id: taskId } = await submitTask(env, userId, { command: "ffmpeg -i https://example.com/in.mp4 out.mp4", with_metadata: false, destination: { id: destination.name, mode } });
  const stored = await storeOutput(env, { userId, taskId, filename: "out.mp4", length: CONTENT.length, contentType: "video/mp4", body: new Response(CONTENT).body });
  await acceptReport(env, { taskId, userId, run: 0 }, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size: CONTENT.length, receipt: stored.receipt }] });
  return { userId, key, taskId, destination };
}

/** Makes an output of a task past its expiry, as FILE_TTL_SECONDS later: the object stays in R2, as it does until the lifecycle rule runs. */
export async function expireOutput(userId: string, taskId: string, filename = "out.mp4"): Promise<void> {
  const key = `outputs/${userId}/${taskId}/${filename}`;
  const past = new Date(Date.now() - 1000).toISOString();
  const object = (await env.FILES.get(key))!;
  await env.FILES.put(key, await object.arrayBuffer(), { httpMetadata: object.httpMetadata, customMetadata: { ...object.customMetadata, expires_at: past } });
  await env.DB.prepare("UPDATE files SET expires_at = ? WHERE key = ?").bind(past, key).run();
}

export async function presented(taskId: string): Promise<Task> {
  return presentTask(env, (await findTaskById(env.DB, taskId))!);
}

/**
 * Rings the task's alarm (set for now, it may also ring by itself), then waits until the task's
 * record shows `attempts` attempts at each of its outputs: D1 gets each one once it is over.
 */
export async function attempted(taskId: string, attempts: number): Promise<Task> {
  await runDurableObjectAlarm(taskStub(env, taskId));
  const deadline = Date.now() + 15_000;
  for (;;) {
    const task = await presented(taskId);
    if (task.outputs?.length && task.outputs.every((output) => (output.destination?.attempts ?? 0) >= attempts)) return task;
    if (Date.now() > deadline) throw new Error(`no attempt ${attempts} at ${taskId}'s delivery: ${JSON.stringify(task.outputs)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Makes every waiting attempt due now, then waits for attempt number `attempts`. */
export async function nextAttempt(taskId: string, attempts: number): Promise<Task> {
  await runInDurableObject(taskStub(env, taskId), async (_object, state) => {
    const entries = await state.storage.get<{ due_at: number }[]>("deliveries");
    const now = Date.now();
    await state.storage.put("deliveries", entries!.map((entry) => ({ ...entry, due_at: now })));
    await state.storage.setAlarm(Date.now());
  });
  return attempted(taskId, attempts);
}
