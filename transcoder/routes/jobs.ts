import type { FastifyInstance } from "fastify";
import { AppError } from "../../shared/errors";
import { TranscodeJobSchema } from "../../shared/schemas/jobs";

/** The edge's dispatch API: start a job, ask whether it still runs here, cancel it. */
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

  // A task whose reports stopped asks this: a 404 (say, after a restart) means its run is lost.
  fastify.get<{ Params: { task_id: string } }>("/jobs/:task_id", async (request, reply) => {
    if (!fastify.jobs.get(request.params.task_id)) throw new AppError("NOT_FOUND", `No job for task ${request.params.task_id} is running here.`);
    return reply.send({ running: true });
  });

  fastify.delete<{ Params: { task_id: string } }>("/jobs/:task_id", async (request, reply) => {
    if (!(await fastify.jobs.cancel(request.params.task_id))) {
      throw new AppError("NOT_FOUND", `No job for task ${request.params.task_id} is running here.`);
    }
    return reply.code(202).send({ canceled: true });
  });
}
