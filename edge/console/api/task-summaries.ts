import { createRoute, z } from "@hono/zod-openapi";
import { originalNames } from "../../files/records";
import { config } from "../../lib/config";
import { createApp } from "../../lib/openapi";
import { findTask } from "../../tasks/repository";
import { renameInputs, summarizeCommand, uploadKeyOf } from "../summary";
import { requireSession } from "./guards";
import { problems } from "./routes";

const TaskIdsSchema = z.object({
  ids: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}(,[A-Za-z0-9_-]{1,64}){0,99}$/, "must be 1 to 100 task ids separated by commas")
    .transform((ids) => [...new Set(ids.split(","))]),
});

const SummarySchema = z.object({
  inputs: z.array(z.object({ url: z.string(), name: z.string() })),
  outputs: z.array(z.string()),
  operations: z.string(),
  text: z.string(),
});

const SummariesSchema = z.object({ summaries: z.record(z.string(), SummarySchema) });

/**
 * What the task list shows of each command: inputs by the name they were uploaded under, outputs,
 * and the options between them. Ids that are not the user's tasks are left out, as if missing.
 */
export const taskSummaries = createApp();
taskSummaries.use("/console/api/task-summaries", requireSession);

taskSummaries.openapi(
  createRoute({
    method: "get", path: "/console/api/task-summaries", hide: true, request: { query: TaskIdsSchema },
    responses: { 200: { description: "Summaries by task id", content: { "application/json": { schema: SummariesSchema } } }, ...problems },
  }),
  async (c) => {
    const userId = c.get("userId");
    const rows = (await Promise.all(c.req.valid("query").ids.map((id) => findTask(c.env.DB, userId, id)))).filter((row) => row !== null);
    const settings = config(c.env);
    const origins = [settings.publicUrl, settings.cnPublicUrl];
    const summaries = rows.map((row) => ({ id: row.id, summary: summarizeCommand(row.command) }));
    const keys = [...new Set(summaries.flatMap(({ summary }) => summary.inputs.map((input) => uploadKeyOf(input.url, origins)).filter((key) => key !== undefined)))];
    const names = await originalNames(c.env.DB, userId, keys);
    const nameOf = (url: string) => names.get(uploadKeyOf(url, origins) ?? "");
    return c.json({ summaries: Object.fromEntries(summaries.map(({ id, summary }) => [id, renameInputs(summary, nameOf)])) }, 200);
  },
);
