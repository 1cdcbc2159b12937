import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../../edge/index";
import { findTaskById } from "../../../edge/tasks/repository";
import { expectProblem } from "../../helpers/problems";
import { api, createUser, postJson } from "../helpers";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -c:v libx264 -t 2 out.mp4";

type Result = { index: number; task_id?: string; status?: string; error?: { status: number; code: string; detail: string; pointer: string; retry_after?: number } };
type BatchAnswer = { results: Result[]; created: number; refused: number };

function batch(key: string, tasks: unknown[], idempotencyKey?: string): Promise<Response> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (idempotencyKey) headers["idempotency-key"] = idempotencyKey;
  return api("/v1/tasks/batch", key, { method: "POST", headers, body: JSON.stringify({ tasks }) });
}

async function taskCount(userId: string): Promise<number> {
  return (await env.DB.prepare("SELECT COUNT(*) AS n FROM tasks WHERE user_id = ?").bind(userId).first<number>("n")) ?? 0;
}

describe("POST /v1/tasks/batch", () => {
  it("creates every task in order and answers 200 with one result per item", async () => {
    const { key, userId } = await createUser();
    const commands = ["a.mp4", "b.mp4", "c.mp4"].map((name) => `ffmpeg -i https://example.com/in.mp4 -t 2 ${name}`);
    const response = await batch(key, commands.map((command, index) => ({ command, with_metadata: index === 1, timeout_seconds: 60 })));
    expect(response.status).toBe(200);
    const answer = await response.json<BatchAnswer>();
    expect(answer).toMatchObject({ created: 3, refused: 0 });
    expect(answer.results.map((result) => [result.index, result.status])).toEqual([[0, "pending"], [1, "pending"], [2, "pending"]]);
    const rows = await Promise.all(answer.results.map((result) => findTaskById(env.DB, result.task_id!)));
    expect(rows.map((row) => [row?.user_id, row?.command, row?.with_metadata, row?.time_limit_seconds])).toEqual(commands.map((command, index) => [userId, command, index === 1 ? 1 : 0, 60]));
    expect(new Set(answer.results.map((result) => result.task_id)).size).toBe(3);
  });

  it("refuses a malformed item, a command the policy refuses and a blocked webhook each in its own result, and creates the others", async () => {
    const { key, userId } = await createUser();
    const response = await batch(key, [
      { command: COMMAND },
      { command: "ffmpeg -i https://example.com/in.mp4" },
      { command: COMMAND, webhook: "https://169.254.169.254/hook" },
      { command: 42 },
      "not a task",
      { command: COMMAND },
    ]);
    expect(response.status).toBe(200);
    const answer = await response.json<BatchAnswer>();
    expect(answer).toMatchObject({ created: 2, refused: 4 });
    expect(answer.results.map((result) => result.error?.code ?? result.status)).toEqual(["pending", "NO_OUTPUT", "URL_HOST_BLOCKED", "VALIDATION_FAILED", "VALIDATION_FAILED", "pending"]);
    for (const result of answer.results.filter((result) => result.error)) {
      expect(result.error).toMatchObject({ status: 400, pointer: `/tasks/${result.index}`, title: expect.any(String), type: expect.stringMatching(/^https:\/\//) });
      expect(result.error!.detail).toMatch(new RegExp(`^tasks\\[${result.index}\\]: `));
    }
    expect(answer.results[3]!.error).toMatchObject({ issues: [{ path: ["tasks", 3, "command"] }] });
    expect(await taskCount(userId)).toBe(2);
  });

  it("takes the daily quota item by item: once it is used up, later items are refused QUOTA_EXCEEDED and earlier ones stay", async () => {
    const { key, userId } = await createUser();
    const ctx = createExecutionContext();
    const request = new Request("http://localhost:8787/v1/tasks/batch", {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ tasks: [{ command: COMMAND, timeout_seconds: 600 }, { command: COMMAND, timeout_seconds: 300 }, { command: COMMAND, timeout_seconds: 300 }, { command: COMMAND, timeout_seconds: 100 }] }),
    });
    const response = await worker.fetch(request, { ...env, DAILY_TASK_SECONDS: "1000" }, ctx);
    await waitOnExecutionContext(ctx);
    expect(response.status).toBe(200);
    const answer = await response.json<BatchAnswer>();
    expect(answer.results.map((result) => result.error?.code ?? result.status)).toEqual(["pending", "pending", "pending", "QUOTA_EXCEEDED"]);
    expect(answer.results[3]!.error).toMatchObject({ status: 429, retry_after: expect.any(Number) });
    const limits = await Promise.all(answer.results.slice(0, 3).map(async (result) => (await findTaskById(env.DB, result.task_id!))?.time_limit_seconds));
    expect(limits).toEqual([600, 300, 100]);
    expect(await taskCount(userId)).toBe(3);
  });

  it.each([
    ["101 items", Array.from({ length: 101 }, () => ({ command: COMMAND }))],
    ["no item", []],
  ])("refuses a batch of %s whole with 400 VALIDATION_FAILED and creates nothing", async (_name, tasks) => {
    const { key, userId } = await createUser();
    const problem = await expectProblem(await batch(key, tasks), 400, "VALIDATION_FAILED");
    expect(problem.detail).toContain("tasks");
    expect(await taskCount(userId)).toBe(0);
  });

  it("refuses a body without a tasks array, and one that is not JSON", async () => {
    const { key } = await createUser();
    await expectProblem(await postJson("/v1/tasks/batch", key, { command: COMMAND }), 400, "VALIDATION_FAILED");
    await expectProblem(await api("/v1/tasks/batch", key, { method: "POST", headers: { "content-type": "application/json" }, body: "{" }), 400, "INVALID_JSON");
  });

  it("requires an API key", async () => {
    await expectProblem(await postJson("/v1/tasks/batch", undefined, { tasks: [{ command: COMMAND }] }), 401, "UNAUTHORIZED");
  });

  it("answers a repeat with the same Idempotency-Key and body with the same results, creating nothing new", async () => {
    const { key, userId } = await createUser();
    const tasks = [{ command: COMMAND }, { command: "sh -c id" }, { command: COMMAND }];
    const first = await batch(key, tasks, "batch-1");
    expect(first.status).toBe(200);
    const original = await first.json<BatchAnswer>();
    const repeat = await batch(key, tasks, "batch-1");
    expect(repeat.status).toBe(200);
    expect(repeat.headers.get("idempotent-replayed")).toBe("true");
    expect(await repeat.json()).toEqual(original);
    expect(await taskCount(userId)).toBe(2);
    await expectProblem(await batch(key, [{ command: COMMAND }], "batch-1"), 409, "IDEMPOTENCY_KEY_REUSED");
    expect(await taskCount(userId)).toBe(2);
  });

  it("is in the OpenAPI document with every item a CreateTask", async () => {
    const document = await (await api("/openapi.json", undefined)).json<{ paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } }>();
    const body = document.paths["/v1/tasks/batch"]!.post.requestBody.content["application/json"].schema;
    expect(body).toEqual({ $ref: "#/components/schemas/TaskBatch" });
    expect(document.components.schemas.TaskBatch.properties.tasks).toMatchObject({ maxItems: 100, minItems: 1, items: { $ref: "#/components/schemas/CreateTask" } });
    expect(document.paths["/v1/tasks/batch"]!.post.responses["200"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/TaskBatchResult" });
    expect(document.paths["/v1/tasks/{task_id}/retry"]!.post.responses["201"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/RetriedTask" });
  });
});
