import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { CreateDestinationSchema } from "../../../shared/schemas/destinations";
import { createDestination, updateDestination } from "../../../edge/destinations/manage";
import { insertDestination } from "../../../edge/destinations/repository";
import { taskStub } from "../../../edge/lib/stubs";
import { redeliverOutputs } from "../../../edge/tasks/deliveries";
import { storeOutput } from "../../../edge/tasks/outputs";
import { presentPublicTask } from "../../../edge/tasks/present";
import { acceptReport } from "../../../edge/tasks/reports";
import { findTaskById } from "../../../edge/tasks/repository";
import { submitTask } from "../../../edge/tasks/submit";
import { CONTENT, attempted, completedTask, expireOutput, nextAttempt, presented } from "../destinations/deliveries";
import { destinationBody, s3Object } from "../destinations/fixtures";
import { createUser } from "../helpers";
import { hookUrl, received, receiverName } from "../webhooks/fixtures";

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

  it("fails a later attempt at an output past its expiry with OUTPUT_EXPIRED, delivers nothing and makes no more attempts", async () => {
    const { userId, taskId, destination } = await completedTask("only", { secret_access_key: "wrong" });
    expect((await attempted(taskId, 1)).outputs![0]!.destination).toMatchObject({ status: "pending", error_code: "DESTINATION_CREDENTIALS" });
    await updateDestination(env, userId, destination.id, { secret_access_key: destinationBody().secret_access_key as string });
    await expireOutput(userId, taskId);
    expect((await nextAttempt(taskId, 2)).outputs![0]!.destination).toMatchObject({ status: "failed", attempts: 2, error_code: "OUTPUT_EXPIRED" });
    expect(await s3Object(`${destination.prefix}${taskId}/out.mp4`)).toBeUndefined();
    await runInDurableObject(taskStub(env, taskId), async (_object, state) => state.storage.setAlarm(Date.now()));
    await runDurableObjectAlarm(taskStub(env, taskId));
    expect((await presented(taskId)).outputs![0]!.destination).toMatchObject({ status: "failed", attempts: 2 });
  });

  it("names the destination in the task's end event as GET does", async () => {
    const { userId } = await createUser();
    const destination = await createDestination(env, userId, CreateDestinationSchema.parse(destinationBody()));
    const receiver = receiverName();
    const { task_id: taskId } = await submitTask(env, userId, { command: "ffmpeg -i https://example.com/in.mp4 out.mp4", with_metadata: false, webhook: hookUrl(receiver, 204), destination: { id: destination.name, mode: "only" } });
    const stored = await storeOutput(env, { userId, taskId, filename: "out.mp4", length: 3, contentType: "video/mp4", body: new Response("abc").body });
    await acceptReport(env, { taskId, userId, run: 0 }, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size: 3, receipt: stored.receipt }] });
    const deadline = Date.now() + 10_000;
    while ((await received(receiver)).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const [request] = await received(receiver);
    expect(JSON.parse(request!.body).destination).toEqual({ id: destination.id, mode: "only" });
    expect((await presented(taskId)).destination).toEqual({ id: destination.id, mode: "only" });
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

/** A task of the user naming the destination, completed with these outputs stored in R2; `beforeEnd` runs between submission and completion. */
async function completedWithOutputs(userId: string, destinationId: string, filenames: string[], beforeEnd: () => Promise<unknown>) {
  const { task_id: taskId } = await submitTask(env, userId, { command: `ffmpeg -i https://example.com/in.mp4 ${filenames.join(" ")}`, with_metadata: false, destination: { id: destinationId, mode: "copy" } });
  await beforeEnd();
  const outputs = [];
  for (const filename of filenames) {
    const stored = await storeOutput(env, { userId, taskId, filename, length: 3, contentType: "video/mp4", body: new Response("abc").body });
    outputs.push({ filename, size: 3, receipt: stored.receipt });
  }
  await acceptReport(env, { taskId, userId, run: 0 }, { type: "completed", seq: 0, outputs });
  return { taskId };
}

describe("redelivering the outputs whose delivery failed", () => {
  /** A completed task whose one output failed its every attempt: its destination names a bucket that does not exist. */
  async function failedDelivery() {
    const task = await completedTask("copy", { bucket: "bucket-not-made-yet" });
    await attempted(task.taskId, 1);
    for (let attempt = 2; attempt <= 5; attempt++) await nextAttempt(task.taskId, attempt);
    expect((await presented(task.taskId)).outputs![0]!.destination).toMatchObject({ status: "failed", attempts: 5, error_code: "DESTINATION_REFUSED" });
    return task;
  }

  it("queues a failed output again from 0 attempts, to the destination as it is stored now, and delivers it", async () => {
    const { userId, taskId, destination } = await failedDelivery();
    const fixed = await updateDestination(env, userId, destination.id, { bucket: destinationBody().bucket as string, prefix: "redelivered/" });
    const key = `redelivered/${taskId}/out.mp4`;
    expect(await redeliverOutputs(env, userId, taskId)).toEqual({ task_id: taskId, queued: [{ filename: "out.mp4", destination: { id: fixed.id, status: "pending", key, attempts: 0 } }] });
    expect((await presented(taskId)).outputs![0]!.destination).toEqual({ id: fixed.id, status: "pending", key, attempts: 0 });
    expect((await attempted(taskId, 1)).outputs![0]!.destination).toMatchObject({ status: "delivered", key, attempts: 1 });
    expect(await s3Object(key)).toBe(CONTENT);
  });

  it("queues only the outputs that have not expired here, and names the expired ones", async () => {
    // Both deliveries fail at once while the destination row is away (DESTINATION_NOT_FOUND); then it is back.
    const { userId } = await createUser();
    const destination = await createDestination(env, userId, CreateDestinationSchema.parse(destinationBody()));
    const { taskId } = await completedWithOutputs(userId, destination.id, ["a.mp4", "b.mp4"], () => env.DB.prepare("DELETE FROM destinations WHERE id = ?").bind(destination.id).run());
    expect((await presented(taskId)).outputs!.map((output) => output.destination!.status)).toEqual(["failed", "failed"]);
    expect(await insertDestination(env.DB, destination, 20)).toBe("inserted");
    await expireOutput(userId, taskId, "b.mp4");
    const result = await redeliverOutputs(env, userId, taskId);
    expect(result.queued.map((output) => output.filename)).toEqual(["a.mp4"]);
    expect(result.expired).toEqual(["b.mp4"]);
    const outputs = (await presented(taskId)).outputs!;
    expect(outputs.map((output) => output.destination!.status)).toEqual(["pending", "failed"]);
  });

  it("refuses with NOTHING_TO_REDELIVER, naming them, when every failed output is past its expiry though still in R2", async () => {
    const { userId, taskId, destination } = await failedDelivery();
    await updateDestination(env, userId, destination.id, { bucket: destinationBody().bucket as string });
    await expireOutput(userId, taskId);
    await expect(redeliverOutputs(env, userId, taskId)).rejects.toMatchObject({ code: "NOTHING_TO_REDELIVER", extra: { expired: ["out.mp4"] } });
    expect((await presented(taskId)).outputs![0]!.destination).toMatchObject({ status: "failed", attempts: 5 });
  });

  it("queues nothing a second time while the first redelivery is pending (NOTHING_TO_REDELIVER)", async () => {
    const { userId, taskId } = await failedDelivery();
    await redeliverOutputs(env, userId, taskId);
    await expect(redeliverOutputs(env, userId, taskId)).rejects.toMatchObject({ code: "NOTHING_TO_REDELIVER", status: 409 });
  });
});
