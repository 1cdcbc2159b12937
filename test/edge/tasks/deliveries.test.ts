import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CreateDestinationSchema } from "../../../shared/schemas/destinations";
import type { Task } from "../../../shared/schemas/tasks";
import { createDestination, updateDestination } from "../../../edge/destinations/manage";
import { taskStub } from "../../../edge/lib/stubs";
import { storeOutput } from "../../../edge/tasks/outputs";
import { presentPublicTask, presentTask } from "../../../edge/tasks/present";
import { acceptReport } from "../../../edge/tasks/reports";
import { findTaskById } from "../../../edge/tasks/repository";
import { submitTask } from "../../../edge/tasks/submit";
import { destinationBody, s3Object } from "../destinations/fixtures";
import { createUser } from "../helpers";

const CONTENT = "not really a video, but bytes all the same\n".repeat(200);

/** A task of a fresh user naming a new destination, completed with one output stored in R2. */
async function completedTask(mode: "copy" | "only", overrides: Record<string, unknown> = {}) {
  const { userId } = await createUser();
  const destination = await createDestination(env, userId, CreateDestinationSchema.parse(destinationBody(overrides)));
  const { task_id: taskId } = await submitTask(env, userId, { command: "ffmpeg -i https://example.com/in.mp4 out.mp4", with_metadata: false, destination: { id: destination.name, mode } });
  const stored = await storeOutput(env, { userId, taskId, filename: "out.mp4", length: CONTENT.length, contentType: "video/mp4", body: new Response(CONTENT).body });
  await acceptReport(env, { taskId, userId, run: 0 }, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size: CONTENT.length, receipt: stored.receipt }] });
  return { userId, taskId, destination };
}

async function presented(taskId: string): Promise<Task> {
  return presentTask(env, (await findTaskById(env.DB, taskId))!);
}

/**
 * Rings the task's alarm (set for now, it may also ring by itself), then waits until the task's
 * record shows `attempts` attempts at its output: D1 gets each one once it is over.
 */
async function attempted(taskId: string, attempts: number): Promise<Task> {
  await runDurableObjectAlarm(taskStub(env, taskId));
  const deadline = Date.now() + 15_000;
  for (;;) {
    const task = await presented(taskId);
    if ((task.outputs?.[0]?.destination?.attempts ?? 0) >= attempts) return task;
    if (Date.now() > deadline) throw new Error(`no attempt ${attempts} at ${taskId}'s delivery: ${JSON.stringify(task.outputs)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Makes every waiting attempt due now, then waits for attempt number `attempts`. */
async function nextAttempt(taskId: string, attempts: number): Promise<Task> {
  await runInDurableObject(taskStub(env, taskId), async (_object, state) => {
    const entries = await state.storage.get<{ due_at: number }[]>("deliveries");
    await state.storage.put("deliveries", entries!.map((entry) => ({ ...entry, due_at: 0 })));
    await state.storage.setAlarm(Date.now());
  });
  return attempted(taskId, attempts);
}

describe("deliveries to a task's destination", () => {
  it("completes the task with its output pending, then streams it to the bucket from the alarm", async () => {
    const { taskId, destination } = await completedTask("copy");
    const key = `${destination.prefix}${taskId}/out.mp4`;
    expect((await presented(taskId)).outputs![0]!.destination).toEqual({ id: destination.id, status: "pending", key, attempts: 0 });
    const output = (await attempted(taskId, 1)).outputs![0]!;
    expect(await s3Object(key)).toBe(CONTENT);
    expect(output.destination).toMatchObject({ id: destination.id, status: "delivered", key, attempts: 1 });
    expect(output.destination!.url).toMatch(new RegExp(`/${key.replaceAll(".", "\\.")}$`));
    // `copy`: ours stays, and the output's url is still our CDN.
    expect(output.url).not.toBe(output.destination!.url);
    expect(await env.FILES.head(`outputs/${(await findTaskById(env.DB, taskId))!.user_id}/${taskId}/out.mp4`)).not.toBeNull();
  });

  it("with `only`, deletes our copy once delivered and points the output's url at the destination", async () => {
    const { userId, taskId } = await completedTask("only");
    const output = (await attempted(taskId, 1)).outputs![0]!;
    expect(output.destination!.status).toBe("delivered");
    expect(output.url).toBe(output.destination!.url);
    expect(await env.FILES.head(`outputs/${userId}/${taskId}/out.mp4`)).toBeNull();
  });

  it("keeps a refused delivery pending with its error, delivers once the credentials are fixed, and never shows it without a key", async () => {
    const { userId, taskId, destination } = await completedTask("only", { secret_access_key: "wrong" });
    const task = await attempted(taskId, 1);
    expect(task.outputs![0]!.destination).toMatchObject({ status: "pending", attempts: 1, error_code: "DESTINATION_CREDENTIALS" });
    expect(presentPublicTask(task).outputs![0]).not.toHaveProperty("destination");
    // `only` keeps our copy until the destination has one.
    expect(await env.FILES.head(`outputs/${userId}/${taskId}/out.mp4`)).not.toBeNull();

    await updateDestination(env, userId, destination.id, { secret_access_key: destinationBody().secret_access_key as string });
    expect((await nextAttempt(taskId, 2)).outputs![0]!.destination).toMatchObject({ status: "delivered", attempts: 2 });
    expect(await s3Object(`${destination.prefix}${taskId}/out.mp4`)).toBe(CONTENT);
  });

  it("gives an output up as failed after its last attempt, and makes no more", async () => {
    const { taskId } = await completedTask("copy", { endpoint: "http://127.0.0.1:9" });
    await attempted(taskId, 1);
    for (let attempt = 2; attempt <= 5; attempt++) await nextAttempt(taskId, attempt);
    expect((await presented(taskId)).outputs![0]!.destination).toMatchObject({ status: "failed", attempts: 5, error_code: "DESTINATION_UNREACHABLE" });
    await runInDurableObject(taskStub(env, taskId), async (_object, state) => state.storage.setAlarm(Date.now()));
    await runDurableObjectAlarm(taskStub(env, taskId));
    const task = await presented(taskId);
    expect(task.status).toBe("completed");
    expect(task.outputs![0]!.destination).toMatchObject({ status: "failed", attempts: 5 });
  });

  it("fails the delivery at once when the destination was deleted before the task ended", async () => {
    const { userId } = await createUser();
    const destination = await createDestination(env, userId, CreateDestinationSchema.parse(destinationBody()));
    const { task_id: taskId } = await submitTask(env, userId, { command: "ffmpeg -i https://example.com/in.mp4 out.mp4", with_metadata: false, destination: { id: destination.id, mode: "copy" } });
    await env.DB.prepare("DELETE FROM destinations WHERE id = ?").bind(destination.id).run();
    const stored = await storeOutput(env, { userId, taskId, filename: "out.mp4", length: 3, contentType: "video/mp4", body: new Response("abc").body });
    await acceptReport(env, { taskId, userId, run: 0 }, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size: 3, receipt: stored.receipt }] });
    expect((await presented(taskId)).outputs![0]!.destination).toMatchObject({ status: "failed", attempts: 0, error_code: "DESTINATION_NOT_FOUND" });
  });
});
