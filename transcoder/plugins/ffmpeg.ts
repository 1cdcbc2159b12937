import type { TranscoderConfig } from "../config";
import { FfmpegService } from "../ffmpeg/service";
import { exposed } from "../lib/expose";
import { IsolationMissingError, missingRequiredLayers, toleratedMissingLayers } from "../sandbox/requirements";

declare module "fastify" {
  interface FastifyInstance {
    /** The only way anything in the service runs ffmpeg or ffprobe. */
    ffmpeg: FfmpegService;
  }
}

/**
 * Finds ffmpeg and the sandbox at boot: a missing binary stops the service from starting, and so
 * does, in a Container (EGRESS=container), a missing required isolation layer the operator has
 * not named in SANDBOX_ALLOW_MISSING (sandbox/requirements.ts). Elsewhere (`npm start`, tests on
 * hosts without util-linux or user namespaces) the sandbox stays best effort, as /health reports.
 */
export default exposed<{ config: TranscoderConfig }>(async function ffmpegPlugin(fastify, { config }) {
  const service = await FfmpegService.create(config);
  const isolation = service.sandbox.report;
  if (config.egress === "container") {
    const missing = missingRequiredLayers(isolation, config.sandboxAllowMissing);
    if (missing.length > 0) {
      await service.sandbox.dispose();
      throw new IsolationMissingError(missing);
    }
    const tolerated = toleratedMissingLayers(isolation, config.sandboxAllowMissing);
    if (tolerated.length > 0) fastify.log.warn({ isolation, tolerated }, "starting without required isolation layers, as SANDBOX_ALLOW_MISSING allows");
  }
  fastify.log.info({ ffmpeg: service.version, isolation }, "ffmpeg ready");
  if (!Object.values(isolation).every(Boolean)) {
    fastify.log.warn({ isolation }, "ffmpeg runs with only part of the sandbox on this host");
  }
  fastify.decorate("ffmpeg", service);
  fastify.addHook("onClose", async () => service.sandbox.dispose());
});
