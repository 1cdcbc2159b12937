import type { FastifyInstance } from "fastify";
import { buildApp } from "./app";
import { ConfigError, type TranscoderConfig, loadConfig } from "./config";

/**
 * Entry point: `node --import tsx transcoder/server.ts`. Validates the configuration (a bad one
 * stops the process with the list of problems), detects the sandbox (in a Container, a missing
 * required layer stops it too: sandbox/requirements.ts), listens, and on SIGTERM/SIGINT stops
 * taking jobs (POST /jobs answers 503, so the edge dispatches elsewhere), lets running ones
 * finish and report for SHUTDOWN_GRACE_SECONDS, hands the rest back to the edge (to run again
 * elsewhere) and exits as soon as the last one has reported. A Container rollout sends SIGTERM
 * and SIGKILL 15 minutes later, so the edge sets the grace below that
 * (https://developers.cloudflare.com/containers/platform-details/rollouts/); nothing else here
 * cuts a job during the drain: the listener stays open for the edge's status checks and
 * cancels, and closes only after the last report.
 */
function configOrExit(): TranscoderConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}

async function start(config: TranscoderConfig): Promise<FastifyInstance> {
  try {
    const app = await buildApp(config, {
      // Job requests are small; nothing legitimate needs a slow connection held open.
      connectionTimeout: 30_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5_000,
    });
    await app.listen({ port: config.port, host: config.host });
    return app;
  } catch (error) {
    process.stderr.write(`The transcoder could not start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

const config = configOrExit();
const app = await start(config);

let stopping = false;
async function stop(signal: NodeJS.Signals): Promise<void> {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal, running: app.jobs.running, grace_seconds: config.shutdownGraceSeconds }, "shutting down");
  await app.jobs.shutdown(config.shutdownGraceSeconds * 1000);
  app.log.info("every job has ended and reported; exiting");
  await app.close();
  process.exit(0);
}
process.on("SIGTERM", (signal) => void stop(signal));
process.on("SIGINT", (signal) => void stop(signal));
