import type { onRequestAsyncHookHandler } from "fastify";
import { AppError } from "../../shared/errors";
import type { TranscoderConfig } from "../config";
import { bearerMatches } from "../lib/bearer";
import { exposed } from "../lib/expose";

declare module "fastify" {
  interface FastifyInstance {
    /** onRequest hook for the edge-only routes: `Authorization: Bearer TRANSCODER_SECRET`. */
    authenticateEdge: onRequestAsyncHookHandler;
  }
}

export default exposed<{ config: TranscoderConfig }>(async function authPlugin(fastify, { config }) {
  const authenticateEdge: onRequestAsyncHookHandler = async (request) => {
    if (!bearerMatches(request.headers.authorization, config.transcoderSecret)) {
      throw new AppError("UNAUTHORIZED", "A valid transcoder secret is required.").withHeaders({ "WWW-Authenticate": 'Bearer realm="ffedge-transcoder"' });
    }
  };
  fastify.decorate("authenticateEdge", authenticateEdge);
});
