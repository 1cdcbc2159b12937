import type { TranscoderConfig } from "../config";
import { JobManager } from "../jobs/manager";
import { prepareWorkRoot, sweepStaleWorkspaces } from "../jobs/workspace";
import { exposed } from "../lib/expose";

declare module "fastify" {
  interface FastifyInstance {
    jobs: JobManager;
  }
}

const STALE_MARGIN_MS = 15 * 60_000;

/**
 * The job manager. Closing the app stops whatever still runs (server.ts drains with a grace
 * period first), so no ffmpeg outlives the service.
 */
export default exposed<{ config: TranscoderConfig }>(async function jobsPlugin(fastify, { config }) {
  await prepareWorkRoot(config.workRoot, fastify.ffmpeg.sandbox.runAs);
  // A job cannot outlive its deadline; the margin covers clocks and slow deletes.
  const swept = await sweepStaleWorkspaces(config.workRoot, config.maxJobSeconds * 1000 + STALE_MARGIN_MS);
  if (swept > 0) fastify.log.warn({ swept }, "removed work directories left by an earlier transcoder");
  const jobs = new JobManager({ config, ffmpeg: fastify.ffmpeg, log: fastify.log });
  fastify.decorate("jobs", jobs);
  fastify.addHook("onClose", async () => jobs.shutdown(0));
});
