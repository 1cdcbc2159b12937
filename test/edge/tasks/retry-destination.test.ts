import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CreateDestinationSchema } from "../../../shared/schemas/destinations";
import { createDestination } from "../../../edge/destinations/manage";
import { findTaskById, markFinished, markRunning } from "../../../edge/tasks/repository";
import { expectProblem } from "../../helpers/problems";
import { destinationBody } from "../destinations/fixtures";
import { api, createUser, postJson } from "../helpers";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -c:v libx264 -t 2 out.mp4";

/** A user with one destination of theirs on the tests' S3 server. */
async function userWithDestination() {
  const user = await createUser();
  const destination = await createDestination(env, user.userId, CreateDestinationSchema.parse(destinationBody()));
  return { ...user, destination };
}

async function submitted(key: string, body: Record<string, unknown>): Promise<string> {
  const response = await postJson("/v1/tasks", key, body);
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json<{ task_id: string }>()).task_id;
}

/** Ends the task as the transcoder's report would (completed, no outputs), so it can be retried. */
async function finish(taskId: string): Promise<void> {
  const now = new Date().toISOString();
  await markRunning(env.DB, taskId, now);
  await markFinished(env.DB, taskId, { status: "completed", progress: 100, outputs: [], error: null, error_code: null, started_at: now, finished_at: now });
}

const taskCount = async (userId: string) => (await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE user_id = ?").bind(userId).first<number>("n")) ?? 0;

describe("a task's destination, kept with the task", () => {
  it("stores the destination a task names, resolved to its id, and GET /v1/tasks/{id} shows it", async () => {
    const { key, destination } = await userWithDestination();
    const taskId = await submitted(key, { command: COMMAND, destination: { id: destination.name, mode: "only" } });
    expect(JSON.parse((await findTaskById(env.DB, taskId))!.destination!)).toEqual({ id: destination.id, mode: "only" });
    const task = await (await api(`/v1/tasks/${taskId}`, key)).json<Record<string, unknown>>();
    expect(task.destination).toEqual({ id: destination.id, mode: "only" });
  });

  it("shows no destination on a task that named none, nor to a request without the key", async () => {
    const { key, destination } = await userWithDestination();
    const plain = await submitted(key, { command: COMMAND });
    expect((await findTaskById(env.DB, plain))!.destination).toBeNull();
    expect(await (await api(`/v1/tasks/${plain}`, key)).json()).not.toHaveProperty("destination");
    const delivering = await submitted(key, { command: COMMAND, destination: { id: destination.id } });
    expect(await (await api(`/v1/tasks/${delivering}`, undefined)).json()).not.toHaveProperty("destination");
  });

  it("retries a task to the same destination and mode", async () => {
    const { key, destination } = await userWithDestination();
    const old = await submitted(key, { command: COMMAND, destination: { id: destination.id, mode: "only" } });
    await finish(old);
    const response = await api(`/v1/tasks/${old}/retry`, key, { method: "POST" });
    expect(response.status, await response.clone().text()).toBe(201);
    const { task_id } = await response.json<{ task_id: string }>();
    expect(JSON.parse((await findTaskById(env.DB, task_id))!.destination!)).toEqual({ id: destination.id, mode: "only" });
  });

  it("refuses the retry with 409 DESTINATION_GONE naming the destination once it was deleted, and creates nothing", async () => {
    const { key, userId, destination } = await userWithDestination();
    const old = await submitted(key, { command: COMMAND, destination: { id: destination.id } });
    await finish(old);
    expect((await api(`/v1/destinations/${destination.id}`, key, { method: "DELETE" })).status).toBe(204);
    const before = await taskCount(userId);
    const problem = await expectProblem(await api(`/v1/tasks/${old}/retry`, key, { method: "POST" }), 409, "DESTINATION_GONE");
    expect(problem.destination).toBe(destination.id);
    expect(problem.detail).toContain(destination.id);
    expect(await taskCount(userId)).toBe(before);
  });

  it("takes a destination on each batch item, and refuses only the item naming another user's", async () => {
    const { key, userId, destination } = await userWithDestination();
    const stranger = await userWithDestination();
    const response = await postJson("/v1/tasks/batch", key, { tasks: [{ command: COMMAND, destination: { id: destination.name } }, { command: COMMAND, destination: { id: stranger.destination.id } }] });
    expect(response.status).toBe(200);
    const { results } = await response.json<{ results: { task_id?: string; error?: { code: string; pointer: string; destination?: string } }[] }>();
    expect(JSON.parse((await findTaskById(env.DB, results[0]!.task_id!))!.destination!)).toEqual({ id: destination.id, mode: "copy" });
    expect(results[1]!.error).toMatchObject({ code: "DESTINATION_NOT_FOUND", pointer: "/tasks/1", destination: stranger.destination.id });
    expect(await taskCount(userId)).toBe(1);
  });
});
