import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { createApp } from "../lib/openapi";
import { registerDestinationTools } from "./destination-tools";
import { registerEndpointTools } from "./endpoint-tools";
import { registerFileTools } from "./file-tools";
import { oauthUserOf, requireMcpCaller } from "./oauth";
import { type Caller, type Forward } from "./rest";
import { COMMAND_RULES, registerTaskTools } from "./task-tools";
import { registerWorkflowTools } from "./workflow-tools";

const WORKFLOWS = [
  "Workflows: run_steps chains 2-10 commands in one task (a step reads an earlier one's output as {{steps.K.outputs.<file>}}); run_preset runs a saved template, save_preset and delete_preset manage the user's own; retry_task runs a finished task again.",
  "Outputs can also go to the user's own S3-compatible bucket: pass destination {id, mode} to run_ffmpeg, run_preset or run_steps (list_destinations, test_destination; redeliver_outputs after a failed delivery was fixed). Destinations are created only in the console or the API, never with credentials through these tools.",
  "Webhook endpoints (list_webhook_endpoints, create_webhook_endpoint, delete_webhook_endpoint, get_webhook_deliveries) receive signed events of all the user's tasks; an endpoint's secret is shown once, when it is created.",
].join("\n");

const INSTRUCTIONS = `ffedge runs ffmpeg commands in the cloud. Submit a command with run_ffmpeg, follow it with wait_for_task, and give the user the output URLs (they expire after 24 hours).\n\n${WORKFLOWS}\n\n${COMMAND_RULES}`;

function buildServer(caller: Caller): McpServer {
  // Workers forbid code generation (eval, new Function), which the SDK's default Ajv validator uses.
  // https://developers.cloudflare.com/workers/runtime-apis/web-standards/#javascript-standards
  const server = new McpServer({ name: "ffedge", version: "1.0.0" }, { instructions: INSTRUCTIONS, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  registerTaskTools(server, caller);
  registerFileTools(server, caller);
  registerWorkflowTools(server, caller);
  registerDestinationTools(server, caller);
  registerEndpointTools(server, caller);
  return server;
}

/**
 * The remote MCP server: Streamable HTTP on POST /mcp, stateless. Each POST gets its own server
 * and transport, so any Worker instance can answer any message: a Worker has no session
 * affinity, and what a session would hold (the task) already lives in D1 and the task's
 * Durable Object. GET and DELETE (the server-to-client stream and ending a session, both
 * session features) are answered 405 by the app's method check, as the spec allows:
 * https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#listening-for-messages-from-the-server
 * Tools call the REST API in-process with the caller's key (`forward`), so the key check here
 * and every rule behind it are the REST API's own; an OAuth caller's calls act as its user.
 */
export function mcpServer(forward: Forward) {
  const app = createApp();
  app.post("/mcp", requireMcpCaller, async (c) => {
    const caller: Caller = {
      forward, env: c.env, ctx: c.executionCtx as ExecutionContext,
      origin: new URL(c.req.url).origin, authorization: c.req.header("authorization")!, oauthUserId: oauthUserOf(c.req.raw), signal: c.req.raw.signal,
    };
    // Answers stream as SSE: a wait sends progress notifications, and keep-alive comments hold the
    // connection through it. The transport closes each stream once its answer is sent; the
    // per-request server holds nothing else, so it is left to be collected, not closed here.
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await buildServer(caller).connect(transport);
    const answer = await transport.handleRequest(c.req.raw);
    // Through the context, so the rate-limit headers requireMcpCaller set stay on the answer.
    return c.newResponse(answer.body, answer);
  });
  return app;
}
