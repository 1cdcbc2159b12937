import { expect } from "vitest";
import { api } from "../helpers";

export type ToolResult = { isError?: boolean; content: { type: string; text: string }[]; structuredContent?: Record<string, unknown> };

/** One tools/call over the MCP endpoint, its one JSON-RPC answer read from the SSE stream. */
export async function callTool(key: string, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  const response = await api("/mcp", key, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }),
  });
  expect(response.status).toBe(200);
  const answers = (await response.text()).split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)) as { id?: number; result?: ToolResult });
  return answers.find((message) => message.id === 1)!.result!;
}

/** A tool error's text, failing the test when the call succeeded. */
export function refusal(result: ToolResult): string {
  expect(result.isError, JSON.stringify(result.structuredContent)).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  return result.content[0]!.text;
}

/** A tool's structured answer, failing the test with the tool's text when it was refused. */
export function answer<T>(result: ToolResult): T {
  expect(result.isError, result.content[0]?.text).toBeFalsy();
  return result.structuredContent as T;
}
