import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { MAX_STEPS } from "../../shared/schemas/tasks";
import { idempotencyKey, runArguments, taskId, waitSeconds } from "./arguments";
import { type Caller, asTool, callApi, callJson, toolResult } from "./rest";
import { McpTaskSchema } from "./schemas";
import { submitAndWait, submitRun } from "./task-results";
import { COMMAND_RULES } from "./task-tools";

/** What run_steps adds to the command rules, where the agent writes the steps. */
const STEP_RULES = [
  `STEPS: 2 to ${MAX_STEPS} ffmpeg commands, run in order as ONE task in one work folder: inputs are downloaded once and a later step reads an earlier step's file directly.`,
  "A step reads an earlier step's output with `-i {{steps.K.outputs.<file name>}}`: K is the earlier step's index counted from 0, the file name one that step writes, and the reference stands alone right after -i. Anything else (a later or the same step, a file it does not write, a reference elsewhere in the command) is refused with STEP_REFERENCE_INVALID naming the step.",
  'Example: [{"command": "ffmpeg -i https://example.com/in.mp4 -ss 0 -t 5 clip.mp4", "publish": false}, {"command": "ffmpeg -i {{steps.0.outputs.clip.mp4}} -vf scale=320:-2 small.mp4"}, {"command": "ffmpeg -i {{steps.1.outputs.small.mp4}} -frames:v 1 thumb.jpg"}]',
  "Each step follows the command rules below (an input may also be such a reference) and is checked before anything runs: a refusal keeps the rule's code and its detail starts with 'step K:', and nothing runs. No two steps may write the same file name. publish: false keeps a step's files private (for later steps only); the last step's are the task's outputs, so publish: false there is refused (VALIDATION_FAILED). The time limit, output size and output count apply to the task as a whole.",
  "The task ends at the first step that fails: the result's failed_step names it, error starts with 'step K:', and get_task_log shows every step's ffmpeg output.",
].join("\n");

const McpPresetSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  command: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  builtin: z.boolean(),
});

const McpDeletedSchema = z.object({ deleted: z.literal(true), id: z.string() });

/** run_steps, retry_task, save_preset and delete_preset: the workflows of one request. */
export function registerWorkflowTools(server: McpServer, caller: Caller): void {
  server.registerTool("run_steps", {
    title: "Run chained ffmpeg commands",
    description: `Runs several ffmpeg commands in order as one task (trim, then scale, then a thumbnail, ...) and, if asked, waits for it to end. Returns the task as run_ffmpeg does, plus each step's status, progress and published outputs.\n\n${STEP_RULES}\n\n${COMMAND_RULES}`,
    inputSchema: {
      steps: z.array(z.object({
        command: z.string().min(1).max(16_384).describe("One ffmpeg command; its inputs are URLs or {{steps.K.outputs.<file name>}} of an earlier step"),
        publish: z.boolean().optional().describe("false: this step's outputs stay private, for later steps only (default true; not allowed on the last step, whose outputs are the task's)"),
      })).min(2).max(MAX_STEPS).describe(`The commands in order, 2 to ${MAX_STEPS}`),
      ...runArguments,
    },
    outputSchema: McpTaskSchema.shape,
    annotations: { openWorldHint: true },
  }, ({ steps, ...run }, extra) => asTool(() => submitRun(caller, { steps }, run, extra)));

  server.registerTool("retry_task", {
    title: "Run a finished task again",
    description: "Runs a completed or failed (or canceled) task again as a NEW task, with the same command (a preset's task: its command with the values in place) or steps, the same time limit and destination, and, if asked, waits for it to end; the old task is left as it was. A task still pending or running is TASK_NOT_FINISHED. If one of its inputs was a file of this service (an upload or an output) that has since expired (after 24 h), the retry is refused with INPUT_EXPIRED naming it: store it again (upload_from_url) and submit a new task with run_ffmpeg instead. A destination deleted since is DESTINATION_GONE: submit a new task naming another one.",
    inputSchema: { task_id: taskId, wait_seconds: waitSeconds(30), idempotency_key: idempotencyKey },
    outputSchema: McpTaskSchema.shape,
    annotations: { openWorldHint: true },
  }, ({ task_id, wait_seconds, idempotency_key }, extra) => asTool(() => submitAndWait(caller, `/v1/tasks/${encodeURIComponent(task_id)}/retry`, undefined, { wait_seconds, idempotency_key }, extra)));

  server.registerTool("save_preset", {
    title: "Save a preset",
    description: `Saves one of your own presets: a command template with typed parameters that run_preset then runs with values (list_presets shows it). Mark each parameter in the command with {{name}}, as a whole argument or part of one (scale={{width}}:-2), and declare it in \`parameters\`, a JSON Schema object. A value always fills exactly one argument and can never add an option.\n\nThe template follows the command rules (a URL parameter stands for an input: -i {{input}}); it is checked when saved with the parameters' defaults or examples, and refused with PRESET_INVALID saying why. A name you already use is PRESET_NAME_TAKEN (delete_preset it first to replace it).\n\n${COMMAND_RULES}`,
    inputSchema: {
      name: z.string().min(1).max(64).describe("1-64 lower-case letters, digits, '-' or '_', starting with a letter or digit, e.g. web-720p"),
      command: z.string().min(1).max(16_384).describe("e.g. ffmpeg -i {{input}} -vf scale={{width}}:-2 -c:v libx264 -crf {{crf}} out.mp4"),
      parameters: z.looseObject({
        type: z.literal("object"),
        properties: z.record(z.string(), z.record(z.string(), z.unknown())),
        required: z.array(z.string()).optional(),
      }).default({ type: "object", properties: {} }).describe(
        'A JSON Schema object. Each property: type integer, number, string or boolean, with minimum/maximum, enum, pattern, minLength/maxLength, default, examples, description. A parameter not listed in `required` needs a default; a string parameter needs a default, examples or enum. e.g. {"type": "object", "properties": {"input": {"type": "string", "examples": ["https://example.com/in.mp4"]}, "width": {"type": "integer", "minimum": 16, "maximum": 8192, "default": 1280}, "crf": {"type": "integer", "minimum": 0, "maximum": 51, "default": 23}}, "required": ["input"]}',
      ),
      description: z.string().max(500).optional().describe("What the preset makes, shown by list_presets"),
    },
    outputSchema: McpPresetSchema.shape,
  }, ({ name, command, parameters, description }) => asTool(async () => {
    const saved = await callJson<z.infer<typeof McpPresetSchema>>(caller, "POST", "/v1/presets", { name, command, parameters, description });
    const preset = { id: saved.id, name: saved.name, description: saved.description, command: saved.command, parameters: saved.parameters, builtin: saved.builtin };
    return toolResult(preset, `Saved preset ${preset.name} (${preset.id}). Run it with run_preset {"preset": "${preset.name}", "params": {...}}.`);
  }));

  server.registerTool("delete_preset", {
    title: "Delete a preset",
    description: "Deletes one of your own presets, by name or id. Tasks already run from it are kept. Built-in presets cannot be deleted (PRESET_READ_ONLY); an unknown one is PRESET_NOT_FOUND.",
    inputSchema: { preset: z.string().min(1).max(64).regex(/^[\w-]+$/, "a preset name or id has only letters, digits, '_' and '-'").describe("The preset's name or id, from list_presets") },
    outputSchema: McpDeletedSchema.shape,
    annotations: { destructiveHint: true, idempotentHint: true },
  }, ({ preset }) => asTool(async () => {
    await callApi(caller, "DELETE", `/v1/presets/${encodeURIComponent(preset)}`);
    return toolResult({ deleted: true, id: preset }, `Deleted preset ${preset}.`);
  }));
}
