import { Container, type OutboundHandlerContext } from "@cloudflare/containers";
import { Hono } from "hono";
import { CONTAINER_EDGE_HOST, EGRESS_REFUSED_HEADER } from "../../shared/egress";
import { AppError } from "../../shared/errors";
import type { TranscodeJob } from "../../shared/schemas/jobs";
import { config } from "../lib/config";
import { guardedFetch } from "../lib/guarded-fetch";
import { onError, problemResponse } from "../lib/problem";
import { verifyToken } from "../lib/signed-token";
import { ContainerRuns } from "./container-runs";

/** Where the platform puts the CA that signs its interception of the container's HTTPS. */
const CONTAINER_CA_PATH = "/etc/cloudflare/certs/cloudflare-containers-ca.crt";

/**
 * The transcoder as a Cloudflare Container, one instance per task (named by the task id).
 * It has no internet of its own (`enableInternet = false`), and its HTTP and HTTPS requests
 * (`interceptHttps`; the transcoder trusts the platform's CA through NODE_EXTRA_CA_CERTS) all
 * come to the outbound handlers below: its calls to the edge are answered inside this Worker,
 * and its input downloads go through the guarded fetcher, which checks the real destination.
 * https://developers.cloudflare.com/containers/platform-details/outbound-traffic/
 */
export class TranscoderContainer extends Container<Env> {
  override defaultPort = 8080;
  override enableInternet = false;
  override interceptHttps = true;
  private taskRuns: ContainerRuns | undefined;

  constructor(ctx: DurableObjectState<{}>, env: Env) {
    super(ctx, env);
    const settings = config(env);
    // `sleepAfter` is renewed by requests INTO the container only, and a job's reports go out
    // of it: a short one would stop a container in the middle of its job. The task's end stops
    // it (release, below); this is the backstop, past the longest a task may run.
    // https://developers.cloudflare.com/containers/platform-details/container-lifecycle/
    this.sleepAfter = settings.taskTimeoutSeconds + settings.heartbeatTimeoutSeconds + 60;
    this.envVars = {
      NODE_ENV: settings.production ? "production" : "development",
      TRANSCODER_SECRET: env.TRANSCODER_SECRET,
      // One task per container: its whole CPU belongs to that task.
      MAX_CONCURRENT_JOBS: "1",
      DEFAULT_TIMEOUT_SECONDS: String(settings.taskTimeoutSeconds),
      EGRESS: "container",
      NODE_EXTRA_CA_CERTS: CONTAINER_CA_PATH,
      // The Worker's own development allow-list, so that local inputs work under `wrangler dev`; always empty in production.
      DEV_FETCH_ALLOW_HOSTS: settings.devFetchAllowHosts.join(","),
    };
  }

  /**
   * Starts the container if it is not running and hands it the job; the transcoder's answer.
   * Waits for the removal of a run given up before it; after the task's end, or once a newer
   * run went in, starts nothing (409, as the transcoder answers an old run).
   */
  async startJob(job: TranscodeJob): Promise<Response> {
    const run = job.run ?? 0;
    if (!(await this.runs(job.task_id).admit(run))) {
      return problemResponse(new AppError("TASK_NOT_RUNNABLE", `Run ${run} of task ${job.task_id} may not start: the task has ended, or a newer run went into its container.`));
    }
    return this.containerFetch(new Request("http://transcoder/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${this.env.TRANSCODER_SECRET}`, "content-type": "application/json" },
      body: JSON.stringify(job),
    }));
  }

  /** Whether the container is running, without starting it. */
  async isRunning(): Promise<boolean> {
    return this.ctx.container?.running === true;
  }

  /** Run `run` was given up: see ContainerRuns for why this never touches a newer run. */
  async stopRun(taskId: string, run: number): Promise<void> {
    await this.runs(taskId).stop(run);
  }

  /** The task has ended: the container is removed at once and starts no run again. */
  async endTask(taskId: string): Promise<void> {
    await this.runs(taskId).end();
  }

  private runs(taskId: string): ContainerRuns {
    this.taskRuns ??= new ContainerRuns(this.ctx.storage.kv, {
      running: () => this.ctx.container?.running === true,
      destroy: () => this.destroy(),
      cancelRun: (run) => this.cancelRun(taskId, run),
    });
    return this.taskRuns;
  }

  /** Straight to the container's port: unlike containerFetch, never starts a container. */
  private async cancelRun(taskId: string, run: number): Promise<void> {
    const port = this.ctx.container?.getTcpPort(this.defaultPort);
    await port?.fetch(`http://transcoder/jobs/${encodeURIComponent(taskId)}?run=${run}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${this.env.TRANSCODER_SECRET}` },
    }).then((response) => response.body?.cancel()).catch(() => undefined);
  }
}

TranscoderContainer.outboundByHost = {
  [CONTAINER_EDGE_HOST]: (request: Request, env: Env, context: OutboundHandlerContext) => answerEdgeCall(request, env, context.containerId),
};
TranscoderContainer.outbound = (request: Request, env: Env) => fetchInput(request, env);

let edgeCalls: Hono<{ Bindings: Env }> | undefined;

/**
 * Serves the transcoder's callbacks (edge/routes/internal.ts) to the containers' calls, in this
 * Worker. The entry module plugs the routes in (edge/index.ts), so that this platform adapter
 * imports no route module: routes build on dispatch, never the reverse.
 */
export function serveEdgeCalls<Routes extends { Bindings: Env }>(routes: Hono<Routes>): void {
  const app = new Hono<{ Bindings: Env }>();
  app.route("/", routes);
  app.notFound((c) => problemResponse(new AppError("NOT_FOUND", `There is no route ${c.req.method} ${c.req.path}.`)));
  app.onError(onError);
  edgeCalls = app;
}

const TASK_CALL = /^\/internal\/tasks\/([A-Za-z0-9_-]+)\/(?:events|outputs(?:\/[^/]+)?)$/;
const OBJECT_PUT = /^\/internal\/objects\/([^/]+)$/;

/**
 * A call from the container to CONTAINER_EDGE_HOST: reports (the last one with ffmpeg's log),
 * upload grants and the output uploads themselves, which stream into R2 here with no request-body limit (they never
 * cross Cloudflare's front door). Each container may call only for its own task; the per-task
 * callback token is checked as for any transcoder.
 */
export async function answerEdgeCall(request: Request, env: Env, containerId: string): Promise<Response> {
  const path = new URL(request.url).pathname;
  const taskId = TASK_CALL.exec(path)?.[1] ?? (await uploadTaskId(env, OBJECT_PUT.exec(path)?.[1]));
  if (!taskId || env.TRANSCODER.idFromName(taskId).toString() !== containerId) {
    return problemResponse(new AppError("UNAUTHORIZED", "A container may call back only for its own task."));
  }
  if (!edgeCalls) throw new Error("serveEdgeCalls() was never called: edge/index.ts plugs in the internal routes.");
  return edgeCalls.fetch(request, env);
}

async function uploadTaskId(env: Env, token: string | undefined): Promise<string | undefined> {
  if (!token) return undefined;
  const grant = await verifyToken<{ t: string }>(env.SIGNING_SECRET, "output", token).catch(() => undefined);
  return grant?.t;
}

/**
 * Any other request from the container: an input download. Only reads are let out, through the
 * guarded fetcher, one hop at a time (the transcoder follows redirects itself, each hop coming
 * back here). A refusal carries EGRESS_REFUSED_HEADER so the task fails with its real code.
 */
export async function fetchInput(request: Request, env: Env): Promise<Response> {
  try {
    if (request.method !== "GET" && request.method !== "HEAD") {
      throw new AppError("URL_NOT_ALLOWED", `A transcoder may only download inputs; ${request.method} ${new URL(request.url).host} was refused.`);
    }
    const { response } = await guardedFetch(env, request.url, {
      method: request.method,
      headers: request.headers,
      followRedirects: false,
      timeoutMs: config(env).taskTimeoutSeconds * 1000,
    });
    // Only this handler speaks for the egress: an origin cannot pose as a refusal.
    const headers = new Headers(response.headers);
    headers.delete(EGRESS_REFUSED_HEADER);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
  } catch (error) {
    const refusal = error instanceof AppError ? error : new AppError("URL_UNREACHABLE", `${new URL(request.url).host} could not be fetched.`);
    return problemResponse(refusal, { [EGRESS_REFUSED_HEADER]: refusal.code });
  }
}
