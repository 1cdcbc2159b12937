import Fastify, { type FastifyError, type FastifyInstance, type FastifyServerOptions } from "fastify";
import { AppError, problemBody } from "../shared/errors";
import type { TranscoderConfig } from "./config";
import { exposed } from "./lib/expose";
import authPlugin from "./plugins/auth";
import ffmpegPlugin from "./plugins/ffmpeg";
import jobsPlugin from "./plugins/jobs";
import healthRoutes from "./routes/health";
import jobRoutes from "./routes/jobs";

/** The transcoder: services first, then the one error format, then the routes. */
const app = exposed<{ config: TranscoderConfig }>(async function app(fastify, { config }) {
  await fastify.register(ffmpegPlugin, { config });
  await fastify.register(jobsPlugin, { config });
  await fastify.register(authPlugin, { config });
  // Every body this service takes is JSON; anything else is answered 415 rather than half-parsed.
  fastify.removeContentTypeParser("text/plain");

  fastify.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    const problem = toAppError(error);
    // Busy is capacity, not failure: the edge waits for a slot, so it is no error to log.
    if (problem.status >= 500 && problem.code !== "TRANSCODER_BUSY") request.log.error({ err: error }, "request failed");
    return reply.headers(problem.headers).code(problem.status).type("application/problem+json").send(problemBody(problem));
  });
  fastify.setNotFoundHandler((request, reply) => {
    const problem = new AppError("NOT_FOUND", `${request.method} ${request.url.split("?")[0]} does not exist.`);
    return reply.code(problem.status).type("application/problem+json").send(problemBody(problem));
  });

  await fastify.register(jobRoutes);
  await fastify.register(healthRoutes, { config });
});

/** A ready transcoder for `config`; server.ts adds listening and signals, tests use it as is. */
export async function buildApp(config: TranscoderConfig, options: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const fastify = Fastify({ logger: { level: config.logLevel }, bodyLimit: 256 * 1024, ...options });
  await fastify.register(app, { config });
  await fastify.ready();
  return fastify;
}

/** Fastify's own errors (body parsing, limits) in the service's catalogue; anything else is internal. */
function toAppError(error: FastifyError | AppError): AppError {
  if (error instanceof AppError) return error;
  switch (error.code) {
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new AppError("UNSUPPORTED_MEDIA_TYPE", "Send the body as application/json.");
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new AppError("PAYLOAD_TOO_LARGE", "The body is larger than the transcoder accepts.");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new AppError("INVALID_JSON", "The body is not valid JSON.");
  }
  if (error instanceof SyntaxError) return new AppError("INVALID_JSON", "The body is not valid JSON.");
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) return new AppError("VALIDATION_FAILED", error.message);
  return new AppError("INTERNAL", "The transcoder hit an unexpected error.");
}
