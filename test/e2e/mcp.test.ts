import { once } from "node:events";
import { readFile, writeFile } from "node:fs/promises";
import { type Server, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir, probe } from "../../scripts/lib/media";
import { Stack } from "../../scripts/lib/local-stack";

type Task = { task_id: string; status: string; progress: number; outputs?: { filename: string; url: string; size: number }[]; error?: string; error_code?: string };

let stack: Stack;
let origin: Server;
let originUrl: string;
let dir: string;
let key: string;

/** The official client over Streamable HTTP, with the key in a header as docs/mcp.md configures it. */
async function connect(apiKey: string | undefined): Promise<Client> {
  const client = new Client({ name: "ffedge-e2e", version: "1.0.0" });
  const headers: Record<string, string> = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.edgeUrl}/mcp`), { requestInit: { headers } }));
  return client;
}

beforeAll(async () => {
  stack = await Stack.start();
  dir = await mediaDir();
  const clip = await readFile(await makeClip(dir, "mcp-clip.mp4", { seconds: 2, size: "320x240" }));
  // A plain HTTP origin for upload_from_url: the local stack allows 127.0.0.1 (DEV_FETCH_ALLOW_HOSTS).
  origin = createServer((_request, response) => response.writeHead(200, { "content-type": "video/mp4", "content-length": String(clip.byteLength) }).end(clip));
  origin.listen(0, "127.0.0.1");
  await once(origin, "listening");
  originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/clip.mp4`;
  key = (await stack.createUser()).key;
}, 120_000);

afterAll(async () => {
  origin?.close();
  await stack?.stop();
});

describe("the remote MCP server with the official MCP client", () => {
  it("lists the tools, stores an input from a URL, runs a command and serves its output", async () => {
    const client = await connect(key);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(["run_ffmpeg", "wait_for_task", "upload_from_url", "list_files", "get_task_log"]));

      const stored = await client.callTool({ name: "upload_from_url", arguments: { url: originUrl } });
      expect(stored.isError, JSON.stringify(stored.content)).toBeFalsy();
      const input = (stored.structuredContent as { url: string }).url;

      const progress: number[] = [];
      const run = await client.callTool(
        { name: "run_ffmpeg", arguments: { command: `ffmpeg -i ${input} -vf scale=160:-2 small.mp4`, wait_seconds: 45 } },
        undefined,
        { onprogress: (notification) => progress.push(notification.progress) },
      );
      expect(run.isError, JSON.stringify(run.content)).toBeFalsy();
      let task = run.structuredContent as Task;
      // On a loaded machine the task may outlast one wait; the tool says to wait again.
      while (task.status === "pending" || task.status === "running") {
        task = (await client.callTool({ name: "wait_for_task", arguments: { task_id: task.task_id } })).structuredContent as Task;
      }
      expect(task.status, task.error).toBe("completed");
      expect(progress.length).toBeGreaterThan(0);
      expect(progress).toEqual([...new Set(progress)].sort((a, b) => a - b));
      const output = task.outputs!.find((file) => file.filename === "small.mp4")!;
      const download = await fetch(output.url);
      expect(download.status).toBe(200);
      const path = join(dir, "mcp-small.mp4");
      await writeFile(path, new Uint8Array(await download.arrayBuffer()));
      expect((await probe(path)).streams.find((stream) => stream.codec_type === "video")?.width).toBe(160);

      const log = await client.callTool({ name: "get_task_log", arguments: { task_id: task.task_id } });
      expect((log.structuredContent as { log: string }).log).toMatch(/libx264/);
    } finally {
      await client.close();
    }
  });

  it("answers a refused command with a tool error the agent can read", async () => {
    const client = await connect(key);
    try {
      const result = await client.callTool({ name: "run_ffmpeg", arguments: { command: "ffmpeg -i /etc/passwd out.mp4", wait_seconds: 0 } });
      expect(result.isError).toBe(true);
      expect((result.content as { text: string }[])[0]!.text).toMatch(/^INPUT_NOT_ALLOWED/);
    } finally {
      await client.close();
    }
  });

  it("refuses a client without a key with 401", async () => {
    const error = await connect(undefined).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StreamableHTTPError);
    expect((error as StreamableHTTPError).code).toBe(401);
    expect((error as Error).message).toMatch(/UNAUTHORIZED/);
  });
});
