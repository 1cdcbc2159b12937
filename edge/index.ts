import { sweepAccountRecords } from "./accounts/sweep";
import { buildApp } from "./app";
import { keepContainerPool } from "./dispatch/dispatcher";
import { dispatchJobs } from "./dispatch/queue-consumer";
import { serveEdgeCalls } from "./dispatch/transcoder-container";
import { sweepOpenMultipartUploads } from "./files/open-multiparts";
import { sweepAbandonedUploads, sweepExpiredFiles } from "./files/sweep";
import { sweepIdempotencyKeys } from "./lib/idempotency";
import { log } from "./lib/log";
import { cdn } from "./routes/cdn";
import { internal } from "./routes/internal";
import { reconcileUnfinishedTasks } from "./tasks/reconcile";
import { USER_HAS_TASKS } from "./tasks/repository";
import { sweepUndeliveredWebhooks } from "./tasks/webhook-event";
import { ENDPOINT_LOG_RETENTION_MS, pruneEndpointEvents } from "./webhooks/endpoint-log";
import { announceExpiredFiles } from "./webhooks/file-events";

export { ContainerProxy } from "@cloudflare/containers";
export { DispatchLineObject } from "./dispatch/line-object";
export { ContainerPoolObject } from "./dispatch/container-pool";
export { TranscoderContainer } from "./dispatch/transcoder-container";
export { TaskObject } from "./tasks/task-object";
export { WebhookReceiverObject } from "./webhooks/receiver-object";

const app = buildApp();
// The containers' calls to the edge are answered by the same internal routes as a TRANSCODER_URL server's.
serveEdgeCalls(internal, cdn);

export default {
  fetch: app.fetch,
  // One queue, ffedge-jobs (shared/schemas/queue.ts).
  queue: dispatchJobs,
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(keepContainerPool(env));
    ctx.waitUntil(sweepExpiredFiles(env, new Date(), (keys) => announceExpiredFiles(env, keys)).then((count) => log.info("sweep", { deleted: count })));
    ctx.waitUntil(reconcileUnfinishedTasks(env).then((count) => log.info("reconciled unfinished tasks", { checked: count })));
    ctx.waitUntil(sweepAccountRecords(env, { userHasTasks: USER_HAS_TASKS }).then((counts) => log.info("sweep accounts", counts)));
    ctx.waitUntil(Promise.all([sweepAbandonedUploads(env), sweepIdempotencyKeys(env), sweepUndeliveredWebhooks(env), sweepOpenMultipartUploads(env)]).then(([uploads, keys, webhooks, multiparts]) => log.info("sweep leftovers", { tus_uploads: uploads, idempotency_keys: keys, webhooks_handed_over: webhooks, multipart_uploads: multiparts })));
    ctx.waitUntil(pruneEndpointEvents(env.DB, new Date(Date.now() - ENDPOINT_LOG_RETENTION_MS)));
  },
} satisfies ExportedHandler<Env>;
