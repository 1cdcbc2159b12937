import { describe, expect, it } from "vitest";
import { api, createUser, postJson } from "../helpers";
import { originUrl } from "../files/fixtures";

const TOOLS = [
  "run_ffmpeg", "run_preset", "list_presets", "get_task", "wait_for_task", "cancel_task", "list_tasks", "validate_command", "upload_from_url", "list_files", "get_task_log",
  "run_steps", "retry_task", "save_preset", "delete_preset", "list_destinations", "test_destination", "redeliver_outputs",
  "list_webhook_endpoints", "create_webhook_endpoint", "delete_webhook_endpoint", "get_webhook_deliveries",
];
const COMMAND = "ffmpeg -i https://example.com/in.mp4 -t 2 out.mp4";

type ToolResult = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: Record<string, unknown> };
type RpcAnswer = { jsonrpc: "2.0"; id: number; result?: Record<string, unknown>; error?: { code: number; message: string } };

let nextId = 1;

function mcp(key: string | undefined, method: string, params: Record<string, unknown> = {}): Promise<Response> {
  return api("/mcp", key, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: nextId++, method, params }),
  });
}

/** Every JSON-RPC message of an answer: the server streams it as SSE (progress notifications, then the result). */
async function messages(response: Response): Promise<(RpcAnswer & { method?: string; params?: Record<string, unknown> })[]> {
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/event-stream");
  const text = await response.text();
  return text.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice("data: ".length)));
}

async function rpc(key: string, method: string, params: Record<string, unknown> = {}): Promise<RpcAnswer> {
  const answers = (await messages(await mcp(key, method, params))).filter((message) => "id" in message);
  expect(answers).toHaveLength(1);
  return answers[0]!;
}

async function callTool(key: string, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const answer = await rpc(key, "tools/call", { name, arguments: args });
  expect(answer.error).toBeUndefined();
  return answer.result as ToolResult;
}

describe("POST /mcp", () => {
  it("refuses a request without a key with the REST API's 401 problem", async () => {
    const response = await mcp(undefined, "tools/list");
    expect(response.status).toBe(401);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(await response.json()).toMatchObject({ status: 401, code: "UNAUTHORIZED", detail: "A valid API key is required: send it as 'Authorization: Bearer <key>'." });
  });

  it("refuses a wrong key exactly as a missing one", async () => {
    const response = await mcp(`ffe_${"0".repeat(48)}`, "tools/list");
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: "UNAUTHORIZED" });
  });

  it("counts against the key's rate limit and answers 429 past it, as the REST API does", { timeout: 45_000 }, async () => {
    const { key } = await createUser();
    let limited: Response | undefined;
    // Windows are fixed (200 per 10 s in tests): a burst straddling a boundary fills the next one.
    for (let sent = 0; sent < 3 * 200 + 25 && !limited; sent += 25) {
      for (const response of await Promise.all(Array.from({ length: 25 }, () => mcp(key, "ping")))) {
        if (response.status === 429) limited ??= response;
        else expect(response.headers.get("ratelimit-policy")).toBe("200;w=10");
        if (response !== limited) await response.body?.cancel();
      }
    }
    expect(limited).toBeDefined();
    expect(limited!.headers.get("content-type")).toBe("application/problem+json");
    expect(await limited!.json()).toMatchObject({ code: "RATE_LIMITED" });
  });

  it("initializes with the server's name and instructions that teach the command rules", async () => {
    const { key } = await createUser();
    const answer = await rpc(key, "initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "0" } });
    expect(answer.result).toMatchObject({ protocolVersion: "2025-06-18", serverInfo: { name: "ffedge" }, capabilities: { tools: {} } });
    expect(answer.result!.instructions).toMatch(/http\(s\) URLs/);
    expect(answer.result!.instructions).toMatch(/run_steps chains 2-10 commands/);
    expect(answer.result!.instructions).toMatch(/never with credentials/);
  });

  it("lists every tool with a description, an input schema and an output schema", async () => {
    const { key } = await createUser();
    const { result } = await rpc(key, "tools/list");
    const tools = (result as { tools: { name: string; description?: string; inputSchema: { type: string }; outputSchema?: { type: string } }[] }).tools;
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOLS].sort());
    for (const tool of tools) {
      expect(tool.description!.length, tool.name).toBeGreaterThan(60);
      expect(tool.inputSchema.type, tool.name).toBe("object");
      expect(tool.outputSchema?.type, tool.name).toBe("object");
      // Some clients do not resolve references in a tool's schemas.
      expect(JSON.stringify(tool), tool.name).not.toContain("$ref");
    }
    const run = tools.find((tool) => tool.name === "run_ffmpeg")!;
    expect(run.description).toMatch(/bare file names/);
    expect(run.description).toMatch(/local paths/);
    expect(run.description).toMatch(/24 hours/);
  });

  it("answers GET and DELETE with 405 and Allow: POST (a stateless server has no stream or session)", async () => {
    const { key } = await createUser();
    for (const method of ["GET", "DELETE"]) {
      const response = await api("/mcp", key, { method, headers: { accept: "text/event-stream" } });
      expect(response.status, method).toBe(405);
      expect(response.headers.get("allow"), method).toBe("POST");
      expect(await response.json()).toMatchObject({ code: "METHOD_NOT_ALLOWED" });
    }
  });

  it("answers a body that is not JSON-RPC with a JSON-RPC parse error, not a 500", async () => {
    const { key } = await createUser();
    const response = await api("/mcp", key, { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: "{not json" });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32700 } });
  });
});

describe("MCP tools", () => {
  it("validate_command returns a tool error naming the rule a local input breaks", async () => {
    const { key } = await createUser();
    const result = await callTool(key, "validate_command", { command: "ffmpeg -i /etc/passwd out.mp4" });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(result.content[0]!.text).toMatch(/^INPUT_NOT_ALLOWED \(HTTP 400\): .*http\(s\) URL/);
  });

  it("validate_command answers an accepted command's inputs and outputs as structured content", async () => {
    const { key } = await createUser();
    const result = await callTool(key, "validate_command", { command: COMMAND });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ valid: true, inputs: ["https://example.com/in.mp4"], outputs: ["out.mp4"] });
  });

  it("answers malformed arguments with a tool error, never a 500", async () => {
    const { key } = await createUser();
    for (const args of [{}, { command: 42 }, { command: COMMAND, wait_seconds: 3600 }]) {
      const result = await callTool(key, "run_ffmpeg", args);
      expect(result.isError, JSON.stringify(args)).toBe(true);
      expect(result.content[0]!.text).toMatch(/Input validation error/);
    }
    const { total } = (await (await api("/v1/tasks", key)).json()) as { total: number };
    expect(total).toBe(0);
  });

  it("refuses a task id that would name another route as a path segment", async () => {
    const { key } = await createUser();
    for (const task_id of [".", "..", "a/b", "tsk_1?x=1"]) {
      const result = await callTool(key, "get_task", { task_id });
      expect(result.isError, task_id).toBe(true);
      expect(result.content[0]!.text, task_id).toMatch(/Input validation error.*task id/);
    }
  });

  it("answers an unknown tool with a tool error", async () => {
    const { key } = await createUser();
    const result = await callTool(key, "rm_rf", {});
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(/rm_rf not found/);
  });

  it("run_ffmpeg without waiting submits the task and returns it pending, as get_task and list_tasks then show it", async () => {
    const { key } = await createUser();
    const run = await callTool(key, "run_ffmpeg", { command: COMMAND, wait_seconds: 0 });
    expect(run.isError).toBeFalsy();
    const task = run.structuredContent as { task_id: string; status: string; progress: number };
    expect(task).toMatchObject({ task_id: expect.stringMatching(/^tsk_/), status: "pending", progress: 0 });
    expect(run.content[0]!.text).toContain("wait_for_task");

    expect((await callTool(key, "get_task", { task_id: task.task_id })).structuredContent).toMatchObject({ task_id: task.task_id, status: "pending" });
    const list = await callTool(key, "list_tasks", { status: "pending" });
    expect(list.structuredContent).toMatchObject({ total: 1, tasks: [{ task_id: task.task_id }] });
  });

  it("run_ffmpeg retried with the same idempotency_key returns the task it made instead of running the command twice", async () => {
    const { key } = await createUser();
    const first = (await callTool(key, "run_ffmpeg", { command: COMMAND, wait_seconds: 0, idempotency_key: "retry-1" })).structuredContent as { task_id: string };
    const again = (await callTool(key, "run_ffmpeg", { command: COMMAND, wait_seconds: 0, idempotency_key: "retry-1" })).structuredContent as { task_id: string };
    const other = (await callTool(key, "run_ffmpeg", { command: COMMAND, wait_seconds: 0, idempotency_key: "retry-2" })).structuredContent as { task_id: string };
    expect(again.task_id).toBe(first.task_id);
    expect(other.task_id).not.toBe(first.task_id);
    expect((await callTool(key, "list_tasks", {})).structuredContent).toMatchObject({ total: 2 });
  });

  it("wait_for_task returns a task that has not ended once the wait is up, with its id to wait again", async () => {
    const { key } = await createUser();
    const { task_id } = (await (await postJson("/v1/tasks", key, { command: COMMAND })).json()) as { task_id: string };
    const result = await callTool(key, "wait_for_task", { task_id, wait_seconds: 1 });
    expect(result.structuredContent).toMatchObject({ task_id, status: "pending" });
  });

  it("wait_for_task sends notifications/progress for the caller's progressToken before its answer", async () => {
    const { key } = await createUser();
    const { task_id } = (await (await postJson("/v1/tasks", key, { command: COMMAND })).json()) as { task_id: string };
    const all = await messages(await mcp(key, "tools/call", { name: "wait_for_task", arguments: { task_id, wait_seconds: 1 }, _meta: { progressToken: "p1" } }));
    expect(all.map((message) => message.method ?? "answer")).toEqual(["notifications/progress", "answer"]);
    expect(all[0]!.params).toMatchObject({ progressToken: "p1", progress: 0, total: 100 });
  });

  it("cancel_task ends the task CANCELED, then get_task_log reads its log and a second cancel is a tool error", async () => {
    const { key } = await createUser();
    const { task_id } = (await (await postJson("/v1/tasks", key, { command: COMMAND })).json()) as { task_id: string };
    const canceled = await callTool(key, "cancel_task", { task_id });
    expect(canceled.structuredContent).toMatchObject({ task_id, status: "failed", error_code: "CANCELED" });
    const log = await callTool(key, "get_task_log", { task_id });
    expect(log.structuredContent).toMatchObject({ task_id, truncated: false, log: expect.stringContaining("canceled") });
    const again = await callTool(key, "cancel_task", { task_id });
    expect(again.isError).toBe(true);
    expect(again.content[0]!.text).toMatch(/^TASK_NOT_RUNNABLE/);
  });

  it("answers another user's task id as NOT_FOUND, from every task tool", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const { task_id } = (await (await postJson("/v1/tasks", alice.key, { command: COMMAND })).json()) as { task_id: string };
    for (const name of ["get_task", "wait_for_task", "cancel_task", "get_task_log"]) {
      const result = await callTool(bob.key, name, { task_id, ...(name === "wait_for_task" && { wait_seconds: 0 }) });
      expect(result.isError, name).toBe(true);
      expect(result.content[0]!.text, name).toMatch(/^NOT_FOUND \(HTTP 404\)/);
    }
    expect((await callTool(bob.key, "list_tasks", {})).structuredContent).toMatchObject({ total: 0, tasks: [] });
    expect((await callTool(alice.key, "get_task", { task_id })).structuredContent).toMatchObject({ task_id, status: "pending" });
  });

  it("upload_from_url stores a file whose url list_files then shows; a private host is refused", async () => {
    const { key } = await createUser();
    const stored = await callTool(key, "upload_from_url", { url: originUrl("/file/2048") });
    expect(stored.isError, stored.content[0]!.text).toBeFalsy();
    expect(stored.structuredContent).toMatchObject({ size: 2048, url: expect.stringMatching(/^http/) });
    const files = await callTool(key, "list_files", {});
    expect(files.structuredContent).toMatchObject({ total: 1, files: [{ url: stored.structuredContent!.url, size: 2048 }] });

    const refused = await callTool(key, "upload_from_url", { url: "http://169.254.169.254/latest/meta-data" });
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toMatch(/^URL_HOST_BLOCKED/);
  });
});
