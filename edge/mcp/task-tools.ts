import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { runArguments, taskId, waitSeconds } from "./arguments";
import { type Caller, asTool, callApi, callJson, toolResult } from "./rest";
import { type McpTask, McpLogSchema, McpTaskListSchema, McpTaskSchema, McpValidationSchema, toMcpTask } from "./schemas";
import { reportProgress, submitRun, taskResult } from "./task-results";
import { MAX_WAIT_SECONDS, waitForTask } from "./wait";

/** What every tool that takes a command repeats, so an agent reads the rules where it writes the command. */
export const COMMAND_RULES = [
  "One ffmpeg command, as on a terminal, starting with 'ffmpeg' (no path, no environment variables, no shell: |, ;, &&, > and backticks are refused; ffprobe and other programs too).",
  "INPUTS (-i) must be http(s) URLs: a public URL, or the `url` of a file from upload_from_url or list_files. The service downloads each input before ffmpeg starts, so it refuses (INPUT_NOT_ALLOWED / URL_HOST_BLOCKED) local paths (/tmp/a.mp4, ./a.mp4, C:\\a.mp4), file:, devices and lavfi sources, every other protocol (rtmp:, concat:, pipe:, data: ...), playlists that name other files (.m3u8, .mpd, .ffconcat ...) and private or loopback hosts (localhost, 10.x, 192.168.x, 169.254.x): it must never read its own disk or network for you.",
  "OUTPUTS are bare file names with a media extension (out.mp4, audio.mp3, thumb_%03d.jpg), never paths or URLs: the service stores them and returns a download URL for each, valid for 24 hours.",
  "Options that read the service's own disk or only print diagnostics (-filter_script, -dump, ...) and huge sizes or durations are refused; each task also has a time limit (600 s unless the operator set another) and a daily processing quota.",
].join("\n");

const McpPresetListSchema = z.object({
  total: z.number().int(),
  presets: z.array(z.object({
    name: z.string(),
    builtin: z.boolean(),
    description: z.string().nullable(),
    command: z.string(),
    parameters: z.record(z.string(), z.unknown()),
  })),
});

/** run_ffmpeg, run_preset, list_presets, get_task, wait_for_task, cancel_task, list_tasks, validate_command, get_task_log (run_steps and the other workflows: workflow-tools.ts). */
export function registerTaskTools(server: McpServer, caller: Caller): void {
  server.registerTool("run_ffmpeg", {
    title: "Run an ffmpeg command",
    description: `Runs an ffmpeg command in the cloud as a task and, if asked, waits for it to end. Returns the task: its id, status (pending, running, completed, failed), progress, and once completed each output's download URL.\n\n${COMMAND_RULES}\n\nCheck a command first with validate_command if unsure; a refused command is answered with the rule it broke.`,
    inputSchema: {
      command: z.string().min(1).max(16_384).describe("e.g. ffmpeg -i https://example.com/in.mp4 -vf scale=640:-2 -c:a copy small.mp4"),
      ...runArguments,
    },
    outputSchema: McpTaskSchema.shape,
    annotations: { openWorldHint: true },
  }, ({ command, ...run }, extra) => asTool(() => submitRun(caller, { command }, run, extra)));

  // A tool of its own rather than optional fields on run_ffmpeg: a tool's input schema cannot say
  // "command, or preset with params", and an agent reads one clear shape per tool.
  server.registerTool("run_preset", {
    title: "Run a preset",
    description: `Runs a saved command template (a preset) with your values as a task and, if asked, waits for it to end; list_presets shows the presets and each one's parameters (a JSON Schema: types, ranges, which are required). Returns the task as run_ffmpeg does, its command with your values in place.\n\nEach value fills exactly one argument of the command and is checked against its parameter (PRESET_PARAMS_INVALID names the parameter): it can never add an option, so a value may not start with '-'. URL parameters follow the input rules: a public http(s) URL or the \`url\` of one of your files.`,
    inputSchema: {
      preset: z.string().min(1).max(64).describe("The preset's name (e.g. thumbnail) or id, from list_presets"),
      params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}).describe('The parameters\' values by name, e.g. {"video": "https://example.com/in.mp4", "width": 320}'),
      ...runArguments,
    },
    outputSchema: McpTaskSchema.shape,
    annotations: { openWorldHint: true },
  }, ({ preset, params, ...run }, extra) => asTool(() => submitRun(caller, { preset, params }, run, extra)));

  server.registerTool("list_presets", {
    title: "List presets",
    description: "The presets run_preset can run: the built-in ones (thumbnail, gif, hls-ladder, audio-extract, trim, watermark, subtitles-burn-in; builtin true) and your own, each with its command template ({{name}} marks a parameter) and its parameters as a JSON Schema (type, minimum/maximum, enum, default, required).",
    inputSchema: {
      builtin: z.boolean().optional().describe("Only the built-in presets (true) or only yours (false)"),
      limit: z.number().int().min(1).max(100).default(50).describe("Presets per page (1-100)"),
      offset: z.number().int().min(0).default(0).describe("Presets to skip, for the next page"),
    },
    outputSchema: McpPresetListSchema.shape,
    annotations: { readOnlyHint: true },
  }, ({ builtin, limit, offset }) => asTool(async () => {
    const query = new URLSearchParams({ limit: String(limit), offset: String(offset), ...(builtin !== undefined && { builtin: String(builtin) }) });
    const page = await callJson<z.infer<typeof McpPresetListSchema>>(caller, "GET", `/v1/presets?${query}`);
    const presets = page.presets.map(({ name, builtin: isBuiltin, description, command, parameters }) => ({ name, builtin: isBuiltin, description, command, parameters }));
    const lines = presets.map((preset) => `- ${preset.name}${preset.builtin ? " (built-in)" : ""}: ${preset.description ?? preset.command}`);
    return toolResult({ total: page.total, presets }, `${page.total} preset(s); showing ${presets.length} from offset ${offset}:\n${lines.join("\n")}`);
  }));

  server.registerTool("get_task", {
    title: "Get a task",
    description: "A task's status, progress, outputs (bare names with download URLs, valid 24 h) or error, without waiting; a chained task (run_steps) also each step's status and outputs and the step it failed at, and a task run with a destination each output's delivery to the user's bucket. Only your own tasks: any other id is NOT_FOUND.",
    inputSchema: { task_id: taskId },
    outputSchema: McpTaskSchema.shape,
    annotations: { readOnlyHint: true },
  }, ({ task_id }) => asTool(async () => taskResult(toMcpTask(await callJson(caller, "GET", `/v1/tasks/${encodeURIComponent(task_id)}`)))));

  server.registerTool("wait_for_task", {
    title: "Wait for a task",
    description: `Waits up to wait_seconds (at most ${MAX_WAIT_SECONDS}) for a task to complete or fail, then returns it; a task still running is returned with its progress, so call again. Completed tasks carry each output's download URL (valid 24 h).`,
    inputSchema: { task_id: taskId, wait_seconds: waitSeconds(MAX_WAIT_SECONDS) },
    outputSchema: McpTaskSchema.shape,
    annotations: { readOnlyHint: true },
  }, ({ task_id, wait_seconds }, extra) => asTool(async () => taskResult(await waitForTask(caller, task_id, wait_seconds, reportProgress(extra)))));

  server.registerTool("cancel_task", {
    title: "Cancel a task",
    description: "Cancels a pending or running task: it ends failed with error_code CANCELED and produces no outputs. A task that has already ended is TASK_NOT_RUNNABLE.",
    inputSchema: { task_id: taskId },
    outputSchema: McpTaskSchema.shape,
    annotations: { destructiveHint: true, idempotentHint: true },
  }, ({ task_id }) => asTool(async () => taskResult(toMcpTask(await callJson(caller, "POST", `/v1/tasks/${encodeURIComponent(task_id)}/cancel`)))));

  server.registerTool("list_tasks", {
    title: "List tasks",
    description: "Your tasks, newest first, a page at a time (total says how many there are).",
    inputSchema: {
      status: z.enum(["pending", "running", "completed", "failed"]).optional().describe("Only tasks in this state"),
      limit: z.number().int().min(1).max(100).default(10).describe("Tasks per page (1-100)"),
      offset: z.number().int().min(0).default(0).describe("Tasks to skip, for the next page"),
    },
    outputSchema: McpTaskListSchema.shape,
    annotations: { readOnlyHint: true },
  }, ({ status, limit, offset }) => asTool(async () => {
    const query = new URLSearchParams({ limit: String(limit), offset: String(offset), ...(status && { status }) });
    const page = await callJson<{ total: number; tasks: McpTask[] }>(caller, "GET", `/v1/tasks?${query}`);
    const tasks = page.tasks.map(toMcpTask);
    const lines = tasks.map((task) => `- ${task.task_id} ${task.status} ${task.progress}% created ${task.created_at}`);
    return toolResult({ total: page.total, tasks }, `${page.total} task(s); showing ${tasks.length} from offset ${offset}:\n${lines.join("\n")}`);
  }));

  server.registerTool("validate_command", {
    title: "Check a command",
    description: `Checks an ffmpeg command against the service's rules without running it (nothing is downloaded or charged). Answers the inputs it would download and the outputs it would produce, or the rule it breaks with a stable code (INPUT_NOT_ALLOWED, OUTPUT_NOT_ALLOWED, OPTION_NOT_ALLOWED, ...).\n\n${COMMAND_RULES}`,
    inputSchema: { command: z.string().min(1).max(16_384).describe("The ffmpeg command to check") },
    outputSchema: McpValidationSchema.shape,
    annotations: { readOnlyHint: true },
  }, ({ command }) => asTool(async () => {
    const result = await callJson<z.infer<typeof McpValidationSchema>>(caller, "POST", "/v1/tasks/validate", { command });
    return toolResult(result, `The command is accepted. Inputs: ${result.inputs.join(", ")}. Outputs: ${result.outputs.join(", ")}.`);
  }));

  server.registerTool("get_task_log", {
    title: "Read a task's ffmpeg log",
    description: "ffmpeg's output (stderr) for a task that has ended: why a command failed, or what it did. Available once the task ends; the service keeps at most 256 KiB of it.",
    inputSchema: {
      task_id: taskId,
      max_chars: z.number().int().min(100).max(200_000).default(20_000).describe("Show only the last this many characters (the errors are at the end)"),
    },
    outputSchema: McpLogSchema.shape,
    annotations: { readOnlyHint: true },
  }, ({ task_id, max_chars }) => asTool(async () => {
    const text = await (await callApi(caller, "GET", `/v1/tasks/${encodeURIComponent(task_id)}/logs`)).text();
    const truncated = text.length > max_chars;
    const log = truncated ? text.slice(-max_chars) : text;
    return { structuredContent: { task_id, log, truncated }, content: [{ type: "text", text: log }] };
  }));
}
