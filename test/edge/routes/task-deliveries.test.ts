import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CreateDestinationSchema } from "../../../shared/schemas/destinations";
import { createDestination } from "../../../edge/destinations/manage";
import { storeOutput } from "../../../edge/tasks/outputs";
import { acceptReport } from "../../../edge/tasks/reports";
import { submitTask } from "../../../edge/tasks/submit";
import { expectProblem } from "../../helpers/problems";
import { attempted, completedTask, expireOutput, presented } from "../destinations/deliveries";
import { destinationBody } from "../destinations/fixtures";
import { api, createUser } from "../helpers";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 out.mp4";

function redeliver(key: string, taskId: string): Promise<Response> {
  return api(`/v1/tasks/${taskId}/deliveries/retry`, key, { method: "POST" });
}

/** A completed task whose destination was deleted before it ended: its output's delivery failed at once (DESTINATION_NOT_FOUND). */
async function orphanedDelivery() {
  const { userId, key } = await createUser();
  const destination = await createDestination(env, userId, CreateDestinationSchema.parse(destinationBody()));
  const { task_id: taskId } = await submitTask(env, userId, { command: COMMAND, with_metadata: false, destination: { id: destination.id, mode: "copy" } });
  await env.DB.prepare("DELETE FROM destinations WHERE id = ?").bind(destination.id).run();
  const stored = await storeOutput(env, { userId, taskId, filename: "out.mp4", length: 3, contentType: "video/mp4", body: new Response("abc").body });
  await acceptReport(env, { taskId, userId, run: 0 }, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size: 3, receipt: stored.receipt }] });
  expect((await presented(taskId)).outputs![0]!.destination).toMatchObject({ status: "failed", error_code: "DESTINATION_NOT_FOUND" });
  return { userId, key, taskId, destination };
}

describe("POST /v1/tasks/{task_id}/deliveries/retry", () => {
  it("answers 404 for another user's task", async () => {
    const { taskId } = await orphanedDelivery();
    const { key } = await createUser();
    await expectProblem(await redeliver(key, taskId), 404, "NOT_FOUND");
  });

  it("refuses a task that has not ended with 409 TASK_NOT_FINISHED", async () => {
    const { userId, key } = await createUser();
    const destination = await createDestination(env, userId, CreateDestinationSchema.parse(destinationBody()));
    const { task_id } = await submitTask(env, userId, { command: COMMAND, with_metadata: false, destination: { id: destination.id, mode: "copy" } });
    await expectProblem(await redeliver(key, task_id), 409, "TASK_NOT_FINISHED");
  });

  it("refuses a completed task that named no destination with 409 NOTHING_TO_REDELIVER", async () => {
    const { userId, key } = await createUser();
    const { task_id: taskId } = await submitTask(env, userId, { command: COMMAND, with_metadata: false });
    const stored = await storeOutput(env, { userId, taskId, filename: "out.mp4", length: 3, contentType: "video/mp4", body: new Response("abc").body });
    await acceptReport(env, { taskId, userId, run: 0 }, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size: 3, receipt: stored.receipt }] });
    await expectProblem(await redeliver(key, taskId), 409, "NOTHING_TO_REDELIVER");
  });

  it("refuses when every output was delivered with 409 NOTHING_TO_REDELIVER", async () => {
    const { taskId, key } = await completedTask("copy");
    await attempted(taskId, 1);
    const problem = await expectProblem(await redeliver(key, taskId), 409, "NOTHING_TO_REDELIVER");
    expect(problem.detail).toContain("delivered");
  });

  it("refuses with 409 DESTINATION_GONE naming the destination when it was deleted, and changes nothing", async () => {
    const { key, taskId, destination } = await orphanedDelivery();
    const problem = await expectProblem(await redeliver(key, taskId), 409, "DESTINATION_GONE");
    expect(problem.destination).toBe(destination.id);
    expect((await presented(taskId)).outputs![0]!.destination).toMatchObject({ status: "failed", error_code: "DESTINATION_NOT_FOUND" });
  });

  it("refuses with 409 NOTHING_TO_REDELIVER naming the outputs when they expired here", async () => {
    const { key, userId, taskId } = await orphanedDelivery();
    await env.FILES.delete(`outputs/${userId}/${taskId}/out.mp4`);
    const problem = await expectProblem(await redeliver(key, taskId), 409, "NOTHING_TO_REDELIVER");
    expect(problem.expired).toEqual(["out.mp4"]);
  });

  it("refuses with 409 NOTHING_TO_REDELIVER naming the outputs past their expiry, though R2 still holds them", async () => {
    const { key, userId, taskId } = await orphanedDelivery();
    await expireOutput(userId, taskId);
    const problem = await expectProblem(await redeliver(key, taskId), 409, "NOTHING_TO_REDELIVER");
    expect(problem.expired).toEqual(["out.mp4"]);
    expect(await env.FILES.head(`outputs/${userId}/${taskId}/out.mp4`)).not.toBeNull();
  });
});
