import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { probe } from "../../scripts/lib/media";
import { useStackWithClip } from "./helpers";
import { WebhookReceiver } from "./webhook-receiver";

type Step = { index: number; status: string; publish: boolean; outputs: { filename: string }[] };
type Task = { task_id: string; status: string; error?: string; outputs?: { filename: string; url: string; size: number }[]; steps?: Step[] };
type CallResult = { isError?: boolean; content: unknown; structuredContent?: Record<string, unknown> };

const ctx = useStackWithClip({ seconds: 4, size: "640x360" });
const receiver = WebhookReceiver.forFile();
let client: Client;

beforeAll(async () => {
  client = new Client({ name: "ffedge-e2e-workflows", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${ctx.stack.edgeUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${ctx.user.key}` } } }));
}, 60_000);

afterAll(async () => {
  await client?.close();
});

async function call<T>(name: string, args: Record<string, unknown>): Promise<T> {
  const result = (await client.callTool({ name, arguments: args })) as CallResult;
  expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
  return result.structuredContent as T;
}

/** A task tool's answer, waited on again while the task runs (a loaded machine may outlast one wait). */
async function untilEnded(task: Task): Promise<Task> {
  let current = task;
  while (current.status === "pending" || current.status === "running") current = await call<Task>("wait_for_task", { task_id: current.task_id });
  return current;
}

describe("issue 23's workflows through the MCP server, with the official MCP client", () => {
  it("registers an endpoint, runs a chain with run_steps that completes with outputs, and the endpoint receives it signed", async () => {
    const endpoint = await call<{ id: string; secret: string; url: string }>("create_webhook_endpoint", { url: receiver.url("/mcp-hook"), events: ["task.completed"] });
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect((await call<{ endpoints: { id: string }[] }>("list_webhook_endpoints", {})).endpoints.map((item) => item.id)).toEqual([endpoint.id]);

    const task = await untilEnded(await call<Task>("run_steps", {
      steps: [
        { command: `ffmpeg -i ${ctx.clipUrl} -ss 0 -t 2 clip.mp4`, publish: false },
        { command: "ffmpeg -i {{steps.0.outputs.clip.mp4}} -vf scale=160:-2 small.mp4" },
        { command: "ffmpeg -i {{steps.1.outputs.small.mp4}} -frames:v 1 thumb.jpg" },
      ],
      wait_seconds: 45,
    }));
    expect(task.status, task.error).toBe("completed");
    expect(task.steps!.map((step) => [step.index, step.status, step.outputs.map((output) => output.filename)])).toEqual([[0, "completed", []], [1, "completed", ["small.mp4"]], [2, "completed", ["thumb.jpg"]]]);
    const small = task.outputs!.find((output) => output.filename === "small.mp4")!;
    const path = join(ctx.dir, "mcp-steps-small.mp4");
    await writeFile(path, new Uint8Array(await (await fetch(small.url)).arrayBuffer()));
    const video = (await probe(path)).streams.find((stream) => stream.codec_type === "video")!;
    expect({ width: video.width, height: video.height }).toEqual({ width: 160, height: 90 });

    const [delivery] = await receiver.receivedUntil("/mcp-hook", 1);
    const headers = Object.fromEntries(Object.entries(delivery!.headers).map(([name, value]) => [name, String(value)]));
    expect(new Webhook(endpoint.secret).verify(delivery!.body, headers)).toMatchObject({ task_id: task.task_id, status: "completed" });

    expect(await call("delete_webhook_endpoint", { endpoint_id: endpoint.id })).toEqual({ deleted: true, id: endpoint.id });
    expect(await call("list_webhook_endpoints", {})).toEqual({ endpoints: [] });
  }, 180_000);

  it("retry_task runs a finished chain again as a new task that completes", async () => {
    const first = await untilEnded(await call<Task>("run_steps", {
      steps: [{ command: `ffmpeg -i ${ctx.clipUrl} -t 1 -c copy a.mp4`, publish: false }, { command: "ffmpeg -i {{steps.0.outputs.a.mp4}} -frames:v 1 a.jpg" }],
      wait_seconds: 45,
    }));
    expect(first.status, first.error).toBe("completed");
    const again = await untilEnded(await call<Task>("retry_task", { task_id: first.task_id, wait_seconds: 45 }));
    expect(again.task_id).not.toBe(first.task_id);
    expect(again.status, again.error).toBe("completed");
    expect(again.outputs!.map((output) => output.filename)).toEqual(["a.jpg"]);
  }, 180_000);

  it("answers a step that reads a file no earlier step writes with STEP_REFERENCE_INVALID", async () => {
    const result = (await client.callTool({ name: "run_steps", arguments: { steps: [{ command: `ffmpeg -i ${ctx.clipUrl} -t 1 a.mp4` }, { command: "ffmpeg -i {{steps.0.outputs.b.mp4}} b.jpg" }], wait_seconds: 0 } })) as CallResult;
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]!.text).toMatch(/^STEP_REFERENCE_INVALID/);
  });
});
