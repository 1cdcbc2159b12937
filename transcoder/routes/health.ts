import type { FastifyInstance } from "fastify";

/** Liveness and what the sandbox looks like here. 503 while draining, so no new work is routed to it. */
export default async function healthRoutes(fastify: FastifyInstance): Promise<void> {
  // Supervisors (npm start, the edge's liveness probe) ask every few seconds: log only problems.
  fastify.get("/health", { logLevel: "warn" }, async (_request, reply) => {
    const draining = fastify.jobs.isDraining;
    return reply.code(draining ? 503 : 200).send({
      status: draining ? "draining" : "ok",
      running: fastify.jobs.running,
      capacity: fastify.jobs.capacity,
      isolation: fastify.ffmpeg.sandbox.report,
      ffmpeg: fastify.ffmpeg.version,
    });
  });
}
