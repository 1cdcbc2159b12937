import type { FastifyInstance, onRequestHookHandler } from "fastify";
import { z } from "zod";
import { AppError } from "../../shared/errors";
import { TranscodeJobSchema } from "../../shared/schemas/jobs";

/** `?run=N` names one run of the task; without it, whichever run is here. */
const RunQuerySchema = z.object({ run: z.coerce.number().int().nonnegative().optional() });
type RunRequest = { Params: { task_id: string }; Querystring: Record<string, string> };

/** The edge's dispatch API: start a job, ask where a run stands here, cancel it. */
export default async function jobRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.addHook("onRequest", fastify.authenticateEdge);

  fastify.post("/jobs", async (request, reply) => {
    const job = TranscodeJobSchema.safeParse(request.body);
    if (!job.success) {
      const errors = job.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message }));
      throw new AppError("VALIDATION_FAILED", "The body is not a valid transcode job.", { errors });
    }
    fastify.jobs.accept(job.data);
    return reply.code(202).send({ accepted: true });
  });

  // A task whose reports stopped asks this: a 404 (say, after a restart) means its run is lost;
  // `reporting` means the work is done and its end is on its way to the edge.
  fastify.get<RunRequest>("/jobs/:task_id", async (request, reply) => {
    const { task_id: taskId } = request.params;
    const run = runOf(request.query);
    const stage = fastify.jobs.stage(taskId, run);
    if (!stage) throw notHere(taskId, run);
    return reply.send({ running: true, run: fastify.jobs.get(taskId)!.runNumber, stage });
  });

  fastify.delete<RunRequest>("/jobs/:task_id", { onRequest: withoutEmptyBody }, async (request, reply) => {
    const run = runOf(request.query);
    if (!(await fastify.jobs.cancel(request.params.task_id, run))) throw notHere(request.params.task_id, run);
    return reply.code(202).send({ canceled: true });
  });
}

function runOf(query: unknown): number | undefined {
  const parsed = RunQuerySchema.safeParse(query);
  if (!parsed.success) throw new AppError("VALIDATION_FAILED", "`run` must be a whole number from 0.");
  return parsed.data.run;
}

function notHere(taskId: string, run: number | undefined): AppError {
  return new AppError("NOT_FOUND", `No job for ${run === undefined ? "" : `run ${run} of `}task ${taskId} is here.`);
}

/**
 * A DELETE carries no body; one that declares a content type with nothing after it is still a
 * plain DELETE, not broken JSON. Fastify picks a body parser from the header alone, so the
 * header goes when the request says it has no body.
 */
const withoutEmptyBody: onRequestHookHandler = async (request) => {
  const { headers } = request;
  if (headers["transfer-encoding"] === undefined && (headers["content-length"] === undefined || headers["content-length"] === "0")) delete headers["content-type"];
};
