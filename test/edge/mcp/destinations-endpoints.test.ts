import { env, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../../edge/lib/stubs";
import { storeOutput } from "../../../edge/tasks/outputs";
import { CONTENT as DELIVERED, attempted, completedTask, nextAttempt } from "../destinations/deliveries";
import { destinationBody, s3Object } from "../destinations/fixtures";
import { hookUrl, receiverName } from "../webhooks/fixtures";
import { api, createUser, postJson } from "../helpers";
import { answer, callTool, refusal } from "./call-tool";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 out.mp4";
const CONTENT = "bytes of an output\n".repeat(100);

type Delivery = { status: string; key: string; url?: string };
type McpTask = { task_id: string; status: string; outputs?: { filename: string; url: string; destination?: Delivery }[] };

async function savedDestination(key: string, overrides: Record<string, unknown> = {}): Promise<{ id: string; name: string; prefix: string }> {
  const response = await postJson("/v1/destinations", key, destinationBody(overrides));
  expect(response.status, await response.clone().text()).toBe(201);
  return response.json();
}

/** Polls get_task until the output's delivery has left `pending`, ringing the task's alarm. */
async function delivered(key: string, taskId: string): Promise<{ task: McpTask; text: string }> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    await runDurableObjectAlarm(taskStub(env, taskId));
    const result = await callTool(key, "get_task", { task_id: taskId });
    const task = answer<McpTask>(result);
    if (task.outputs?.[0]?.destination?.status !== "pending") return { task, text: result.content[0]!.text };
    if (Date.now() > deadline) throw new Error(`no delivery for ${taskId}: ${JSON.stringify(task)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("MCP destination tools", () => {
  it("list_destinations shows a destination without its secret, and says destinations are made in the console or the API", async () => {
    const { key } = await createUser();
    const empty = await callTool(key, "list_destinations", {});
    expect(answer(empty)).toEqual({ destinations: [] });
    expect(empty.content[0]!.text).toMatch(/console .*or with the REST API/);
    const saved = await savedDestination(key, { secret_access_key: "never-in-a-transcript" });
    const listed = await callTool(key, "list_destinations", {});
    expect(answer(listed)).toEqual({ destinations: [expect.objectContaining({ id: saved.id, name: saved.name, prefix: saved.prefix, credentials_fingerprint: expect.any(String) })] });
    expect(JSON.stringify(listed)).not.toContain("never-in-a-transcript");
  });

  it("no tool takes storage credentials", async () => {
    const { key } = await createUser();
    const response = await api("/mcp", key, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    const schemas = (await response.text()).split("\n").filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("");
    expect(schemas).not.toMatch(/secret_access_key|access_key_id/);
  });

  it("test_destination writes and deletes a probe; wrong credentials and an unknown name are tool errors with their codes", async () => {
    const { key } = await createUser();
    const good = await savedDestination(key);
    const result = answer<{ ok: true; key: string }>(await callTool(key, "test_destination", { destination: good.name }));
    expect(result.key).toMatch(new RegExp(`^${good.prefix}`));
    expect(await s3Object(result.key)).toBeUndefined();
    const bad = await savedDestination(key, { secret_access_key: "wrong" });
    expect(refusal(await callTool(key, "test_destination", { destination: bad.id }))).toMatch(/^DESTINATION_CREDENTIALS \(HTTP 422\)/);
    expect(refusal(await callTool(key, "test_destination", { destination: "nowhere" }))).toMatch(/^NOT_FOUND \(HTTP 404\)/);
  });

  it("run_ffmpeg with an unknown destination is DESTINATION_NOT_FOUND and runs nothing", async () => {
    const { key } = await createUser();
    expect(refusal(await callTool(key, "run_ffmpeg", { command: COMMAND, wait_seconds: 0, destination: { id: "nowhere" } }))).toMatch(/^DESTINATION_NOT_FOUND \(HTTP 400\)/);
    expect(refusal(await callTool(key, "run_steps", { steps: [{ command: COMMAND }, { command: "ffmpeg -i {{steps.0.outputs.out.mp4}} b.mp4" }], wait_seconds: 0, destination: { id: "nowhere" } }))).toMatch(/^DESTINATION_NOT_FOUND/);
    expect((await (await api("/v1/tasks", key)).json<{ total: number }>()).total).toBe(0);
  });

  it("run_ffmpeg with a destination delivers each output, and get_task shows its key and url", async () => {
    const { key, userId } = await createUser();
    const destination = await savedDestination(key);
    const { task_id } = answer<McpTask>(await callTool(key, "run_ffmpeg", { command: COMMAND, wait_seconds: 0, destination: { id: destination.name, mode: "copy" } }));
    const stored = await storeOutput(env, { userId, taskId: task_id, filename: "out.mp4", length: CONTENT.length, contentType: "video/mp4", body: new Response(CONTENT).body });
    const stub = taskStub(env, task_id);
    await stub.report({ type: "started", seq: 0 });
    await stub.report({ type: "completed", seq: 1, outputs: [{ filename: "out.mp4", size: CONTENT.length, receipt: stored.receipt }] });
    const { task, text } = await delivered(key, task_id);
    const deliveredKey = `${destination.prefix}${task_id}/out.mp4`;
    expect(task.outputs![0]!.destination).toMatchObject({ status: "delivered", key: deliveredKey, url: expect.stringMatching(/out\.mp4$/) });
    expect(text).toContain(`delivered to your bucket as ${deliveredKey}`);
    expect(await s3Object(deliveredKey)).toBe(CONTENT);
  });
});

describe("MCP redeliver_outputs", () => {
  it("delivers the outputs whose delivery failed again, once the user fixed the destination; a second call is NOTHING_TO_REDELIVER", async () => {
    const { key, taskId, destination } = await completedTask("copy", { bucket: "bucket-not-made-yet" });
    await attempted(taskId, 1);
    for (let attempt = 2; attempt <= 5; attempt++) await nextAttempt(taskId, attempt);
    const fixed = await api(`/v1/destinations/${destination.id}`, key, { method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify({ bucket: destinationBody().bucket, prefix: "again/" }) });
    expect(fixed.status, await fixed.clone().text()).toBe(200);
    const result = await callTool(key, "redeliver_outputs", { task_id: taskId });
    expect(answer(result)).toEqual({ task_id: taskId, queued: [{ filename: "out.mp4", key: `again/${taskId}/out.mp4` }] });
    expect(result.content[0]!.text).toContain("get_task");
    expect(refusal(await callTool(key, "redeliver_outputs", { task_id: taskId }))).toMatch(/^NOTHING_TO_REDELIVER \(HTTP 409\)/);
    expect((await attempted(taskId, 1)).outputs![0]!.destination).toMatchObject({ status: "delivered", key: `again/${taskId}/out.mp4` });
    expect(await s3Object(`again/${taskId}/out.mp4`)).toBe(DELIVERED);
  });

  it("refuses a task still running with TASK_NOT_FINISHED", async () => {
    const { key } = await createUser();
    const { task_id } = answer<McpTask>(await callTool(key, "run_ffmpeg", { command: COMMAND, wait_seconds: 0 }));
    expect(refusal(await callTool(key, "redeliver_outputs", { task_id }))).toMatch(/^TASK_NOT_FINISHED \(HTTP 409\)/);
  });
});

describe("MCP webhook endpoint tools", () => {
  it("create_webhook_endpoint shows the secret once; list_webhook_endpoints never; delete_webhook_endpoint removes it", async () => {
    const { key } = await createUser();
    const url = hookUrl(receiverName());
    const created = await callTool(key, "create_webhook_endpoint", { url, events: ["task.completed", "task.failed"], description: "my pipeline" });
    const endpoint = answer<{ id: string; secret: string }>(created);
    expect(endpoint).toMatchObject({ id: expect.stringMatching(/^whe_/), url, events: ["task.completed", "task.failed"], description: "my pipeline", enabled: true, secret: expect.stringMatching(/^whsec_/) });
    expect(created.content[0]!.text).toMatch(/shown only now/);

    const listed = await callTool(key, "list_webhook_endpoints", {});
    expect(answer(listed)).toEqual({ endpoints: [expect.objectContaining({ id: endpoint.id, url })] });
    expect(JSON.stringify(listed)).not.toContain(endpoint.secret);
    expect(answer(await callTool(key, "get_webhook_deliveries", { endpoint_id: endpoint.id }))).toEqual({ events: [] });

    expect(answer(await callTool(key, "delete_webhook_endpoint", { endpoint_id: endpoint.id }))).toEqual({ deleted: true, id: endpoint.id });
    expect(answer(await callTool(key, "list_webhook_endpoints", {}))).toEqual({ endpoints: [] });
    expect(refusal(await callTool(key, "delete_webhook_endpoint", { endpoint_id: endpoint.id }))).toMatch(/^NOT_FOUND \(HTTP 404\)/);
  });

  it("refuses an endpoint on a private or metadata address and registers nothing", async () => {
    const { key } = await createUser();
    for (const url of ["https://10.0.0.7/hook", "http://169.254.169.254/latest/meta-data"]) {
      expect(refusal(await callTool(key, "create_webhook_endpoint", { url, events: ["task.completed"] })), url).toMatch(/^URL_HOST_BLOCKED \(HTTP 400\)/);
    }
    expect(answer(await callTool(key, "list_webhook_endpoints", {}))).toEqual({ endpoints: [] });
  });

  it("get_webhook_deliveries of another user's endpoint is NOT_FOUND", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const { id } = answer<{ id: string }>(await callTool(alice.key, "create_webhook_endpoint", { url: hookUrl(receiverName()), events: ["task.failed"] }));
    expect(refusal(await callTool(bob.key, "get_webhook_deliveries", { endpoint_id: id }))).toMatch(/^NOT_FOUND \(HTTP 404\)/);
    expect(refusal(await callTool(bob.key, "delete_webhook_endpoint", { endpoint_id: id }))).toMatch(/^NOT_FOUND/);
  });
});
