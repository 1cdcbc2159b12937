import type { TranscoderConfig } from "../config";
import { FfmpegService } from "../ffmpeg/service";
import { exposed } from "../lib/expose";

declare module "fastify" {
  interface FastifyInstance {
    /** The only way anything in the service runs ffmpeg or ffprobe. */
    ffmpeg: FfmpegService;
  }
}

/** Finds ffmpeg and the sandbox at boot: a missing binary stops the service from starting. */
export default exposed<{ config: TranscoderConfig }>(async function ffmpegPlugin(fastify, { config }) {
  const service = await FfmpegService.create(config);
  const isolation = service.sandbox.report;
  fastify.log.info({ ffmpeg: service.version, isolation }, "ffmpeg ready");
  if (!Object.values(isolation).every(Boolean)) {
    fastify.log.warn({ isolation }, "ffmpeg runs with only part of the sandbox on this host");
  }
  fastify.decorate("ffmpeg", service);
  fastify.addHook("onClose", async () => service.sandbox.dispose());
});
