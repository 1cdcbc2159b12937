import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { DestinationSchema } from "../../shared/schemas/destinations";
import { nameOrId, taskId } from "./arguments";
import { type Caller, asTool, callJson, toolResult } from "./rest";

/** Why no tool creates a destination: repeated where an agent would look for one. */
const NO_CREDENTIALS =
  "Destinations are created by the user in the ffedge console (Settings) or with the REST API (POST /v1/destinations), never through these tools: a bucket's secret key must not pass through a chat transcript. If the user has none, ask them to add one there.";

const McpDestinationSchema = DestinationSchema.pick({ id: true, name: true, endpoint: true, region: true, bucket: true, prefix: true, credentials_fingerprint: true });
const McpDestinationListSchema = z.object({ destinations: z.array(McpDestinationSchema) });
type McpDestination = z.infer<typeof McpDestinationSchema>;

/** list_destinations, test_destination and redeliver_outputs. */
export function registerDestinationTools(server: McpServer, caller: Caller): void {
  server.registerTool("list_destinations", {
    title: "List destinations",
    description: `Your destinations: S3-compatible buckets (AWS S3, Cloudflare R2, GCS, MinIO) that run_ffmpeg, run_preset and run_steps can deliver outputs to with destination {"id": "<name>", "mode": "copy" | "only"}. Each shows its bucket, key prefix and a fingerprint of its key pair, never the secret.\n\n${NO_CREDENTIALS}`,
    inputSchema: {},
    outputSchema: McpDestinationListSchema.shape,
    annotations: { readOnlyHint: true },
  }, () => asTool(async () => {
    const { destinations } = await callJson<{ destinations: McpDestination[] }>(caller, "GET", "/v1/destinations");
    const listed = destinations.map(({ id, name, endpoint, region, bucket, prefix, credentials_fingerprint }) => ({ id, name, endpoint, region, bucket, prefix, credentials_fingerprint }));
    const lines = listed.map((item) => `- ${item.name} (${item.id}): bucket ${item.bucket}${item.prefix ? `, prefix ${item.prefix}` : ""} at ${item.endpoint ?? `AWS S3 ${item.region}`}`);
    const summary = listed.length === 0 ? `You have no destinations. ${NO_CREDENTIALS}` : `${listed.length} destination(s):\n${lines.join("\n")}`;
    return toolResult({ destinations: listed }, summary);
  }));

  server.registerTool("test_destination", {
    title: "Test a destination",
    description: `Checks that a destination accepts writes: writes a small probe object with the stored credentials and deletes it again. Refusals: DESTINATION_CREDENTIALS (the key pair is not accepted), DESTINATION_REFUSED (the bucket refused the write: permissions, a missing bucket), DESTINATION_UNREACHABLE, NOT_FOUND (no such destination). Fixing a destination is the user's to do in the console or the API.\n\n${NO_CREDENTIALS}`,
    inputSchema: { destination: nameOrId("a destination name or id").describe("The destination's name or id, from list_destinations") },
    outputSchema: { ok: z.literal(true), key: z.string().describe("The probe object written and deleted again") },
    annotations: { openWorldHint: true },
  }, ({ destination }) => asTool(async () => {
    const { key } = await callJson<{ key: string }>(caller, "POST", `/v1/destinations/${encodeURIComponent(destination)}/test`);
    return toolResult({ ok: true, key }, `Destination ${destination} accepted a write: the probe ${key} was written and deleted.`);
  }));

  server.registerTool("redeliver_outputs", {
    title: "Deliver a task's outputs again",
    description: `Starts the delivery to the task's destination again for each output whose delivery failed (get_task shows destination.status "failed" and its error), with the destination's credentials and prefix as they are stored now, so call it after the user fixed the destination. Outputs delivered or still pending are left alone. Refusals: TASK_NOT_FINISHED, NOTHING_TO_REDELIVER (no delivery failed, or the outputs whose delivery failed have expired), DESTINATION_GONE (the destination was deleted). Then call get_task until no output's delivery is "pending".\n\n${NO_CREDENTIALS}`,
    inputSchema: { task_id: taskId },
    outputSchema: { task_id: z.string(), queued: z.array(z.object({ filename: z.string(), key: z.string() })) },
    annotations: { openWorldHint: true },
  }, ({ task_id }) => asTool(async () => {
    const result = await callJson<{ task_id: string; queued: { filename: string; destination: { key: string } }[] }>(caller, "POST", `/v1/tasks/${encodeURIComponent(task_id)}/deliveries/retry`);
    const queued = result.queued.map((output) => ({ filename: output.filename, key: output.destination.key }));
    return toolResult({ task_id: result.task_id, queued }, `Delivering again: ${queued.map((output) => `${output.filename} → ${output.key}`).join(", ")}. Call get_task to follow each delivery.`);
  }));
}
