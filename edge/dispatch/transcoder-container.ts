import { Container, type OutboundHandlerContext } from "@cloudflare/containers";
import { Hono } from "hono";
import { CONTAINER_EDGE_HOST, EGRESS_REFUSED_HEADER } from "../../shared/egress";
import { AppError } from "../../shared/errors";
import type { TranscodeJob } from "../../shared/schemas/jobs";
import { config } from "../lib/config";
import { guardedFetch } from "../lib/guarded-fetch";
import { onError, problemResponse } from "../lib/problem";
import { routeGroup } from "../lib/route-hosts";
import { ContainerRuns } from "./container-runs";

/** Where the platform puts the CA that signs its interception of the container's HTTPS. */
const CONTAINER_CA_PATH = "/etc/cloudflare/certs/cloudflare-containers-ca.crt";
/**
 * How long a start may wait for the transcoder's port: the library's default (20 s) is shorter
 * than a cold start of a large image can take on a busy host.
 */
const PORT_WAIT_MS = 60_000;
/** How often a start polls the port (the library's default is 300 ms, a third of a short task's budget). */
const PORT_POLL_MS = 50;
/** Cloudflare sends SIGKILL this long after SIGTERM; the transcoder must have drained by then. */
const SIGKILL_AFTER_SIGTERM_SECONDS = 900;
/** The task this container object was given; it never takes another. */
const OWNER_KEY = "ffedge:task";

function sandboxOverride(layers: string): Record<string, string> {
  return layers.trim() ? { SANDBOX_ALLOW_MISSING: layers.trim() } : {};
}

/**
 * The transcoder as a Cloudflare Container, one instance per task: named by the task when it
 * starts cold for it, or by a name of its own when the pool (container-pool.ts) started it warm.
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
      // On SIGTERM (a rollout, or the platform moving the instance) the running task finishes
      // first: up to its time limit and a minute, within the 15 minutes before SIGKILL.
      // https://developers.cloudflare.com/containers/platform-details/rollouts/
      SHUTDOWN_GRACE_SECONDS: String(Math.min(settings.taskTimeoutSeconds + 60, SIGKILL_AFTER_SIGTERM_SECONDS - 30)),
      DEFAULT_TIMEOUT_SECONDS: String(settings.taskTimeoutSeconds),
      EGRESS: "container",
      NODE_EXTRA_CA_CERTS: CONTAINER_CA_PATH,
      // The Worker's own development allow-list, so that local inputs work under `wrangler dev`; always empty in production.
      DEV_FETCH_ALLOW_HOSTS: settings.devFetchAllowHosts.join(","),
      // Under EGRESS=container the transcoder refuses to start without its isolation layers.
      // Docker's default seccomp profile (the local container stack) refuses unshare, so these two
      // are let go in development; production starts with every layer, unless the operator
      // names the ones to go without (CONTAINER_SANDBOX_ALLOW_MISSING, docs/security.md).
      // The transcoder's log level (its own default unless set): the tasks bench reads its debug lines.
      ...(env.TRANSCODER_LOG_LEVEL ? { LOG_LEVEL: env.TRANSCODER_LOG_LEVEL } : {}),
      ...sandboxOverride(settings.production ? (env.CONTAINER_SANDBOX_ALLOW_MISSING ?? "") : "network_namespace,job_root"),
    };
  }

  /**
   * Starts the container if it is not running and hands it the job; the transcoder's answer.
   * Waits for the removal of a run given up before it; after the task's end, or once a newer
   * run went in, starts nothing (409, as the transcoder answers an old run).
   */
  async startJob(job: TranscodeJob): Promise<Response> {
    const run = job.run ?? 0;
    const owner = this.ctx.storage.kv.get<string>(OWNER_KEY);
    if (owner !== undefined && owner !== job.task_id) {
      return problemResponse(new AppError("TASK_NOT_RUNNABLE", `This container belongs to task ${owner}; a container takes exactly one task.`));
    }
    this.ctx.storage.kv.put(OWNER_KEY, job.task_id);
    if (!(await this.runs(job.task_id).admit(run))) {
      return problemResponse(new AppError("TASK_NOT_RUNNABLE", `Run ${run} of task ${job.task_id} may not start: the task has ended, or a newer run went into its container.`));
    }
    const failedStart = await this.ensureStarted();
    if (failedStart) return failedStart;
    return this.containerFetch(new Request("http://transcoder/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${this.env.TRANSCODER_SECRET}`, "content-type": "application/json" },
      body: JSON.stringify(job),
    }));
  }

  /**
   * Starts the container for the pool, before any task: resolves once the transcoder answers
   * on its port. A container already given a task is left alone.
   */
  async warmUp(): Promise<void> {
    if (this.ctx.storage.kv.get(OWNER_KEY) !== undefined) return;
    const failed = await this.ensureStarted();
    if (failed) throw new Error(`the container did not start (${failed.status}): ${await failed.text()}`);
  }

  /**
   * The pool's periodic call for a warm container: it stays up while the pool holds it (a
   * warm container gets no requests of its own, so `sleepAfter` would stop it); one the pool
   * forgot stops by itself `sleepAfter` after the last call. False when it is not running.
   */
  async keepWarm(): Promise<boolean> {
    if (this.ctx.container?.running !== true || this.ctx.storage.kv.get(OWNER_KEY) !== undefined) return false;
    this.renewActivityTimeout();
    return true;
  }

  /** The task this container was given, if any: its calls to the edge may concern that task only. */
  async taskOf(): Promise<string | null> {
    return this.ctx.storage.kv.get<string>(OWNER_KEY) ?? null;
  }

  /**
   * Called by the pool a while after the task ended and the container stopped: the object's own
   * storage (its state, schedules, alarm, run records) would otherwise be kept, and billed, forever.
   * https://developers.cloudflare.com/durable-objects/api/sqlite-storage-api/#deleteall
   */
  async purge(): Promise<void> {
    if (this.ctx.container?.running === true) return;
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
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

  /**
   * Starts the container unless it runs and answered already, waiting up to PORT_WAIT_MS for its
   * port. No free instance (`max_instances` reached) is 503, which dispatch treats as busy: the
   * task waits in its line and nothing is lost.
   */
  private async ensureStarted(): Promise<Response | undefined> {
    if (this.ctx.container?.running === true && (await this.getState()).status === "healthy") return undefined;
    try {
      await this.startAndWaitForPorts({ ports: [this.defaultPort], cancellationOptions: { portReadyTimeoutMS: PORT_WAIT_MS, waitInterval: PORT_POLL_MS } });
      return undefined;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const noInstance = /no container instance/i.test(message);
      return problemResponse(new AppError(noInstance ? "TRANSCODER_BUSY" : "INTERNAL", `The container did not start: ${message}`));
    }
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
    }).then((response) => response.body?.cancel()).catch(() => undefined); // one that missed it is told to stop by the answer to its next report
  }
}

TranscoderContainer.outboundByHost = {
  [CONTAINER_EDGE_HOST]: (request: Request, env: Env, context: OutboundHandlerContext) => answerEdgeCall(request, env, context.containerId),
};
TranscoderContainer.outbound = (request: Request, env: Env) => fetchInput(request, env);

let edgeCalls: Hono<{ Bindings: Env }> | undefined;

/**
 * Serves the transcoder's callbacks (edge/routes/internal.ts) and its downloads of the
 * service's own files (edge/routes/cdn.ts) to the containers' calls, in this Worker. The entry
 * module plugs the routes in (edge/index.ts), so that this platform adapter imports no route
 * module: routes build on dispatch, never the reverse.
 */
export function serveEdgeCalls<Callbacks extends { Bindings: Env }, Files extends { Bindings: Env }>(callbacks: Hono<Callbacks>, files: Hono<Files>): void {
  const app = new Hono<{ Bindings: Env }>();
  app.route("/", callbacks);
  app.route("/", files);
  app.notFound((c) => problemResponse(new AppError("NOT_FOUND", `There is no route ${c.req.method} ${c.req.path}.`)));
  app.onError(onError);
  edgeCalls = app;
}

const TASK_CALL = /^\/internal\/tasks\/([A-Za-z0-9_-]+)\/(?:events|outputs\/[^/]+)$/;

/**
 * A call from the container to CONTAINER_EDGE_HOST: reports (the last one with ffmpeg's log)
 * and the output uploads, which stream into R2 here with no request-body limit (they never
 * cross Cloudflare's front door). Each container may call only for its own task; the per-task
 * callback token is checked as for any transcoder.
 */
export async function answerEdgeCall(request: Request, env: Env, containerId: string): Promise<Response> {
  const path = new URL(request.url).pathname;
  // The service's files, readable by anyone who has their URL, from a container as from the CDN.
  if ((request.method === "GET" || request.method === "HEAD") && routeGroup(path) === "cdn") return serve(request, env);
  const taskId = TASK_CALL.exec(path)?.[1];
  if (!taskId || !(await servesTask(env, containerId, taskId))) {
    return problemResponse(new AppError("UNAUTHORIZED", "A container may call back only for its own task."));
  }
  return serve(request, env);
}

function serve(request: Request, env: Env): Promise<Response> | Response {
  if (!edgeCalls) throw new Error("serveEdgeCalls() was never called: edge/index.ts plugs in the internal routes.");
  return edgeCalls.fetch(request, env);
}

/**
 * Whether the container object `containerId` was given `taskId`. A container started cold for
 * a task is named by the task; one from the warm pool has a name of its own and records its task
 * when the task's job goes in. A container takes exactly one task for its whole life, so an
 * answer never goes stale and is kept for the isolate's life (bounded: isolates live long).
 */
const owners = new Map<string, string>();
const OWNERS_KEPT = 10_000;

async function servesTask(env: Env, containerId: string, taskId: string): Promise<boolean> {
  if (env.TRANSCODER.idFromName(taskId).toString() === containerId) return true;
  let owner = owners.get(containerId);
  if (!owner) {
    const namespace = env.TRANSCODER as unknown as DurableObjectNamespace<TranscoderContainer>;
    // Fails closed: an object that does not answer vouches for no task, and is asked again next time.
    owner = (await namespace.get(namespace.idFromString(containerId)).taskOf().catch(() => null)) ?? undefined;
    if (owner) {
      if (owners.size >= OWNERS_KEPT) owners.clear();
      owners.set(containerId, owner);
    }
  }
  return owner === taskId;
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
