/** Where a task's outputs were delivered (its destination): each output's status, the retry of failed deliveries. */
import { api, taskPath } from "../api";
import { guarded } from "../actions";
import { $, announce, el, statusBadge } from "../dom";
import { isUnfinished } from "../format";
import type { Destination, Task, TaskOutput, TaskView } from "../types";

/** One output's delivery: "Delivery: delivered ffedge/tsk_…/out.mp4 (1 attempt)", or failed with the reason. */
export function destinationLine(output: TaskOutput): HTMLElement | null {
  const destination = output.destination;
  if (!destination) return null;
  const attempts = `${destination.attempts} attempt${destination.attempts === 1 ? "" : "s"}`;
  const where = destination.url ? el("a", { href: destination.url, class: "mono" }, destination.key) : el("span", { class: "mono" }, destination.key);
  const why = destination.error ? `: ${destination.error_code ? `${destination.error_code}: ` : ""}${destination.error}` : "";
  return el(
    "p",
    { class: `destination destination-${destination.status}` },
    "Delivery: ",
    statusBadge(destination.status),
    " ",
    where,
    ` (${attempts})${why}`,
  );
}

const names = new Map<string, Promise<string>>();

/** A destination's name for its id; the id itself when it cannot be read (deleted since). */
function nameOf(id: string): Promise<string> {
  // A destination deleted since the task ran is named by its id.
  if (!names.has(id)) names.set(id, api<Destination>(`/v1/destinations/${encodeURIComponent(id)}`).then((destination) => destination.name, () => id));
  return names.get(id)!;
}

const pendingDelivery = (task: Pick<TaskView, "outputs">) => (task.outputs ?? []).some((output) => output.destination?.status === "pending");

/** The task's destination above its outputs, and Retry failed deliveries when one failed. */
export function showDelivery(task: TaskView): void {
  const box = $("#task-destination");
  const destination = task.destination;
  box.hidden = !destination;
  if (destination) {
    const unfinished = isUnfinished(task);
    void nameOf(destination.id).then((name) => {
      const only = destination.mode === "only";
      box.textContent = unfinished
        ? `Once the task completes, its outputs are delivered to your destination ${name}${only ? " only (copy here removed once delivered)" : " as well as kept here"}.`
        : only ? `Outputs are delivered to your destination ${name} only.` : `Outputs are also delivered to your destination ${name}.`;
    });
  }
  $("#retry-deliveries").hidden = !(task.status === "completed" && (task.outputs ?? []).some((output) => output.destination?.status === "failed"));
}

/** While deliveries are pending, re-reads the task every 2 s (for at most 2 minutes) to show how they went. */
export async function followDeliveries(taskId: string, show: (task: Task) => void, task?: Task): Promise<void> {
  let current = task ?? (await api<Task>(taskPath(taskId)));
  for (let i = 0; i < 60 && pendingDelivery(current); i++) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    current = await api<Task>(taskPath(taskId));
    show(current);
    if (!pendingDelivery(current)) announce("Deliveries finished");
  }
}

export function setUpDeliveryRetry(taskId: string, show: (task: Task) => void): void {
  $("#retry-deliveries").addEventListener("click", guarded(async () => {
    await api(`${taskPath(taskId)}/deliveries/retry`, { method: "POST" });
    announce("Failed deliveries queued again");
    const task = await api<Task>(taskPath(taskId));
    show(task);
    await followDeliveries(taskId, show, task);
  }));
}
