import type { FastifyInstance } from "fastify";
import type { TranscoderConfig } from "../config";
import { freeBytesNow } from "../jobs/workspace";

/**
 * Liveness and what the sandbox looks like here. 503 while draining, and 503 `degraded` with the
 * reason while WORK_ROOT is nearly full (a job there would fail WORKSPACE_FULL), so no new work is
 * routed to it.
 */
export default async function healthRoutes(fastify: FastifyInstance, { config }: { config: TranscoderConfig }): Promise<void> {
  // Supervisors (npm start, the edge's liveness probe) ask every few seconds: log only problems.
  fastify.get("/health", { logLevel: "warn" }, async (_request, reply) => {
    const draining = fastify.jobs.isDraining;
    const { workRoot, minFreeWorkBytes, instance } = config;
    const free = freeBytesNow(workRoot);
    const lowOnSpace = free < minFreeWorkBytes;
    return reply.code(draining || lowOnSpace ? 503 : 200).send({
      status: draining ? "draining" : lowOnSpace ? "degraded" : "ok",
      ...(lowOnSpace ? { reason: `WORK_ROOT has ${free} bytes free, below MIN_FREE_WORK_BYTES (${minFreeWorkBytes}).` } : {}),
      ...(instance === undefined ? {} : { instance }),
      running: fastify.jobs.running,
      capacity: fastify.jobs.capacity,
      work_root_free_bytes: free,
      isolation: fastify.ffmpeg.sandbox.report,
      ffmpeg: fastify.ffmpeg.version,
    });
  });
}
