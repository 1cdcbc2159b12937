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
/** Another transcoder sharing WORK_ROOT may be killed at any time; its directories go within this. */
const SWEEP_INTERVAL_MS = 5 * 60_000;

/**
 * The job manager. Closing the app stops whatever still runs (server.ts drains with a grace
 * period first), so no ffmpeg outlives the service.
 */
export default exposed<{ config: TranscoderConfig }>(async function jobsPlugin(fastify, { config }) {
  await prepareWorkRoot(config.workRoot, fastify.ffmpeg.sandbox.runAs);
  // A job cannot outlive its deadline; the margin covers clocks and slow deletes.
  const sweep = async () => {
    const swept = await sweepStaleWorkspaces(config.workRoot, config.maxJobSeconds * 1000 + STALE_MARGIN_MS);
    if (swept > 0) fastify.log.warn({ swept }, "removed work directories left by a transcoder that was killed");
  };
  await sweep();
  const sweeper = setInterval(() => void sweep().catch((error: unknown) => fastify.log.warn({ err: error }, "could not sweep WORK_ROOT")), SWEEP_INTERVAL_MS);
  sweeper.unref();
  const jobs = new JobManager({ config, ffmpeg: fastify.ffmpeg, log: fastify.log });
  fastify.decorate("jobs", jobs);
  fastify.addHook("onClose", async () => {
    clearInterval(sweeper);
    await jobs.shutdown(0);
  });
});
