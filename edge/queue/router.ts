import { dispatchJobs } from "./dispatch-jobs";

type QueueHandler = (batch: MessageBatch<unknown>, env: Env) => Promise<void>;

/** Queue name → consumer. One Worker consumes every queue; production names may carry a suffix. */
const CONSUMERS: [prefix: string, handler: QueueHandler][] = [
  ["ffedge-jobs", dispatchJobs],
];

export async function routeQueue(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const consumer = CONSUMERS.find(([prefix]) => batch.queue.startsWith(prefix));
  if (!consumer) throw new Error(`No consumer for queue ${batch.queue}`);
  await consumer[1](batch, env);
}
