import { Hono } from "hono";
import { bearerToken } from "../../shared/bearer";
import { AppError } from "../../shared/errors";
import { JobEventSchema, type StoredOutput } from "../../shared/schemas/jobs";
import { verifyToken } from "../lib/signed-token";
import { storeOutput } from "../tasks/outputs";
import { acceptReport, type Reporter } from "../tasks/reports";

/**
 * Callbacks from transcoders, authenticated by the per-task token the edge put in the job
 * (edge/dispatch/job.ts): its task `t`, run `r` and owner `u`. A token for one task cannot
 * report on or store files for another.
 */
export const internal = new Hono<{ Bindings: Env; Variables: { reporter: Reporter } }>();

internal.use("/internal/tasks/:task_id/*", async (c, next) => {
  const token = bearerToken(c.req.header("authorization"));
  if (!token) throw new AppError("UNAUTHORIZED", "A task callback token is required.");
  const grant = await verifyToken<{ t: string; r?: number; u?: string }>(c.env.SIGNING_SECRET, "callback", token).catch(() => {
    throw new AppError("UNAUTHORIZED", "The task callback token is not valid.");
  });
  if (grant.t !== c.req.param("task_id")) throw new AppError("UNAUTHORIZED", "The task callback token is for another task.");
  if (!grant.u) throw new AppError("UNAUTHORIZED", "The task callback token names no owner.");
  c.set("reporter", { taskId: grant.t, run: grant.r ?? 0, userId: grant.u });
  await next();
});

internal.post("/internal/tasks/:task_id/events", async (c) => {
  // A body that is not JSON fails validation on the next line.
  const parsed = JobEventSchema.safeParse(await c.req.json().catch(() => undefined));
  if (!parsed.success) throw new AppError("VALIDATION_FAILED", `Invalid report: ${parsed.error.issues.map((issue) => issue.message).join("; ")}.`);
  return c.json(await acceptReport(c.env, c.get("reporter"), parsed.data));
});

/** One output, streamed from the transcoder's PUT into R2 (tasks/outputs.ts says why this is the only way). */
internal.put("/internal/tasks/:task_id/outputs/:filename", async (c) => {
  const length = Number(c.req.header("content-length") ?? Number.NaN);
  if (!Number.isSafeInteger(length) || length < 0) throw new AppError("VALIDATION_FAILED", "An output upload needs its Content-Length.");
  const { taskId, userId } = c.get("reporter");
  const stored = await storeOutput(c.env, { userId, taskId, filename: c.req.param("filename"), length, contentType: c.req.header("content-type"), body: c.req.raw.body });
  return c.json({ key: stored.key, size: stored.size, md5: stored.md5, receipt: stored.receipt } satisfies StoredOutput, 201);
});
