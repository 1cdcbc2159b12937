import { Container } from "@cloudflare/containers";
import { guardedFetch } from "../lib/guarded-fetch";

/**
 * The transcoder as a Cloudflare Container, one instance per task. It has no direct internet
 * access: every outbound request (input downloads, reports and output uploads to the edge)
 * is handed to `outbound`, which sends it through the same guarded fetcher as the Worker.
 * https://developers.cloudflare.com/containers/platform-details/outbound-traffic/
 */
export class TranscoderContainer extends Container<Env> {
  override defaultPort = 8080;
  override sleepAfter = "2m";
  override enableInternet = false;

  constructor(ctx: DurableObjectState<{}>, env: Env) {
    super(ctx, env);
    this.envVars = {
      NODE_ENV: "production",
      PORT: "8080",
      TRANSCODER_SECRET: env.TRANSCODER_SECRET,
      // One task per container: its whole CPU belongs to that task.
      MAX_CONCURRENT_JOBS: "1",
      DEFAULT_TIMEOUT_SECONDS: env.TASK_TIMEOUT_SECONDS,
    };
  }
}

TranscoderContainer.outbound = async (request: Request, env: Env): Promise<Response> => {
  const { response } = await guardedFetch(env, request.url, {
    method: request.method,
    headers: request.headers,
    body: request.body ?? undefined,
    timeoutMs: 15 * 60_000,
  });
  return response;
};
