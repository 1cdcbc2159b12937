import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { type Caller, callJson, toolResult } from "./rest";
import type { McpTask } from "./schemas";
import { waitForTask } from "./wait";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

type McpOutput = NonNullable<McpTask["outputs"]>[number];

function describeOutput(output: McpOutput): string {
  const line = `- ${output.filename}: ${output.url} (${output.size} bytes)`;
  const delivery = output.destination;
  if (!delivery) return line;
  if (delivery.status === "delivered") return `${line}; delivered to your bucket as ${delivery.key}${delivery.url ? ` (${delivery.url})` : ""}`;
  if (delivery.status === "failed") return `${line}; delivery to your bucket FAILED with ${delivery.error_code ?? "an error"}: ${delivery.error ?? ""}`;
  return `${line}; delivery to your bucket pending (get_task shows it once done)`;
}

function describeSteps(task: McpTask): string {
  if (!task.steps) return "";
  const lines = task.steps.map((step) => {
    const files = step.outputs.length > 0 ? `: ${step.outputs.map((output) => output.filename).join(", ")}` : step.publish ? "" : " (outputs kept private)";
    return `- step ${step.index} ${step.status}${step.status === "running" ? ` ${step.progress}%` : ""}${files}`;
  });
  return `\nSteps:\n${lines.join("\n")}`;
}

function describeTask(task: McpTask): string {
  const steps = describeSteps(task);
  if (task.status === "completed") return `Task ${task.task_id} completed. Outputs (links expire in 24 h):\n${(task.outputs ?? []).map(describeOutput).join("\n")}${steps}`;
  if (task.status === "failed") {
    const where = task.failed_step !== undefined ? ` at step ${task.failed_step} (later steps did not run)` : "";
    return `Task ${task.task_id} failed${where} with ${task.error_code ?? "an error"}: ${task.error ?? ""}\nget_task_log shows ffmpeg's full output.${steps}`;
  }
  return `Task ${task.task_id} is ${task.status} (${task.progress}%${task.eta_seconds !== undefined ? `, about ${task.eta_seconds} s left` : ""}). Call wait_for_task with this id to wait for it.${steps}`;
}

export const taskResult = (task: McpTask) => toolResult(task, describeTask(task));

/**
 * notifications/progress (0-100) while a call waits, when the client asked for them with a
 * progressToken; only rising values, as the spec requires of successive notifications.
 */
export function reportProgress(extra: Extra): ((progress: number) => void) | undefined {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  let last = -1;
  return (progress) => {
    if (progress <= last) return;
    last = progress;
    // Progress is a courtesy: a client that stopped listening loses nothing.
    extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress, total: 100, message: `${progress}%` } }).catch(() => {});
  };
}


/**
 * What every tool that makes a task does: POST it (to /v1/tasks, or a retry's route), with the
 * caller's idempotency key if any, then wait for it as asked and describe it.
 */
export async function submitAndWait(caller: Caller, path: string, body: Record<string, unknown> | undefined, options: { wait_seconds: number; idempotency_key?: string }, extra: Extra) {
  const headers = options.idempotency_key ? { "idempotency-key": options.idempotency_key } : undefined;
  const created = await callJson<{ task_id: string }>(caller, "POST", path, body, headers);
  return taskResult(await waitForTask(caller, created.task_id, options.wait_seconds, reportProgress(extra)));
}

/** POST /v1/tasks with the tool's work (a command, a preset, steps) and its run arguments (runArguments), then as submitAndWait. */
export function submitRun(caller: Caller, work: Record<string, unknown>, run: { wait_seconds: number; timeout_seconds?: number; idempotency_key?: string; destination?: unknown }, extra: Extra) {
  return submitAndWait(caller, "/v1/tasks", { ...work, timeout_seconds: run.timeout_seconds, destination: run.destination }, run, extra);
}
