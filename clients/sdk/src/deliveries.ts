import { FFedgeError } from "./errors.js";
import { sleep } from "./http.js";
import type { Task, TaskOutput } from "./types.js";

type Delivered = Pick<TaskOutput, "url" | "filename"> & { destination?: TaskOutput["destination"] };

/** Whether an output now lives only in its destination's bucket (delivered `only`): its `url` is the bucket's. */
export function deliveredOnly(output: Delivered): boolean {
  return output.destination?.status === "delivered" && output.destination.url === output.url;
}

/** The outputs whose delivery to the task's destination has not ended yet. */
function pendingDeliveries(task: Task): TaskOutput[] {
  return (task.outputs ?? []).filter((output) => output.destination?.status === "pending");
}

/**
 * Polls the task until no output's delivery is `pending` (the delivery follows `completed`, with
 * retries per the deployment's schedule), reporting the count left each time it changes.
 */
export async function settleDeliveries(task: Task, get: () => Promise<Task>, onPending: (pending: number, total: number) => void, signal?: AbortSignal): Promise<Task> {
  const total = (task.outputs ?? []).filter((output) => output.destination).length;
  let delay = 500;
  let reported = -1;
  for (let pending = pendingDeliveries(task).length; pending > 0; pending = pendingDeliveries(task).length) {
    if (pending !== reported) onPending((reported = pending), total);
    await sleep(delay, signal);
    delay = Math.min(Math.round(delay * 1.5), 5000);
    task = await get();
  }
  if (reported > 0) onPending(0, total);
  return task;
}

/** DELIVERY_FAILED naming each output whose delivery failed and its code, with the task in `problem.task`; none when all went. */
export function deliveryFailure(task: Task): FFedgeError | undefined {
  const failed = (task.outputs ?? []).filter((output) => output.destination?.status === "failed");
  if (!failed.length) return undefined;
  const detail = failed.map(({ filename, destination }) => `${filename}: ${destination!.error_code ?? "INTERNAL"}${destination!.error ? ` (${destination!.error})` : ""}`).join("; ");
  return new FFedgeError({ type: "about:blank", status: 0, code: "DELIVERY_FAILED", title: "Delivery failed", detail: `Task ${task.task_id} completed, but ${detail}. Fix the destination, then retry the deliveries.`, task });
}

/** Why an output cannot be read from where its `url` points: it went `only` to a bucket that does not serve it to us, or its copy here was deleted by such a delivery. */
export function outputAtDestination(output: Delivered, cause: FFedgeError): FFedgeError {
  const where = output.destination ? `destination ${output.destination.id} as ${output.destination.key}` : "its destination";
  const detail = deliveredOnly(output)
    ? `${output.filename} was delivered only to ${where}, and ffedge keeps no copy; ${output.url} answered ${cause.status || cause.code}: read it with the bucket's own credentials.`
    : `${output.filename} is not on ffedge any more while its delivery to ${where} is pending (an \`only\` delivery removes it here): wait until the delivery ends, then read it from the bucket.`;
  return FFedgeError.local("OUTPUT_AT_DESTINATION", "Output is in your bucket", detail, cause);
}
