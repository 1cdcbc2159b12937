/** One task: its status, times, steps, outputs and previews, live while it runs; its log and webhook deliveries. */
import { API, api, isStatus, taskPath } from "../api";
import { copy, control, guarded } from "../actions";
import { $, announce, el, formatTime, statusBadge } from "../dom";
import { formatBytes, formatDuration, isUnfinished, shownStatus } from "../format";
import { followTaskEvents } from "../live";
import type { DeliveryList, Task, TaskOutput, TaskView } from "../types";
import { destinationLine, followDeliveries, setUpDeliveryRetry, showDelivery } from "./task-delivery";
import { refreshSteps, showSteps } from "./task-steps";
import { setUpTaskTools } from "./task-tools";

export async function taskPage(): Promise<void> {
  const taskId = document.body.dataset.taskId!;
  const path = taskPath(taskId);
  let task: Task;
  try {
    task = await api<Task>(path);
  } catch (error) {
    if (isStatus(error, 404)) {
      $("#task-missing").hidden = false;
      return;
    }
    throw error;
  }
  $("#task-body").hidden = false;
  $("#task-command").textContent = task.command;
  showTask(task);
  showSteps(task);
  setUpTaskTools(task);
  setUpDeliveryRetry(taskId, showTask);
  void loadDeliveries(taskId);
  if (isUnfinished(task)) followTask(taskId, task);
  else {
    void loadLog(taskId);
    void followDeliveries(taskId, showTask, task);
  }

  $("#cancel-task").addEventListener("click", guarded(async () => {
    await api(`${path}/cancel`, { method: "POST" });
    announce("Cancel requested");
  }));
  $("#delete-task").addEventListener("click", guarded(async () => {
    if (!confirm("Delete this task, its outputs and its log?")) return;
    await api(path, { method: "DELETE" });
    location.assign("/console/tasks");
  }));
  $("#redeliver").addEventListener("click", guarded(async () => {
    const before = await loadDeliveries(taskId);
    await api(`${path}/webhooks/redeliver`, { method: "POST" });
    announce("Redelivery queued");
    // The attempt goes through the queue; show it once it has been made.
    for (let i = 0; i < 15; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      if ((await loadDeliveries(taskId)) > before) return announce("Redelivery attempted");
    }
  }));
}

function showTask(task: TaskView): void {
  const previous = $("#task-status").textContent;
  const status = shownStatus(task);
  $("#task-status").replaceChildren(statusBadge(status));
  if (previous && previous !== status) announce(`Task ${status}`);
  $<HTMLProgressElement>("#task-progress").value = task.progress;
  $("#task-percent").textContent = `${task.progress}%`;
  $("#task-eta").textContent = task.status === "running" && typeof task.eta_seconds === "number" ? `· about ${formatDuration(task.eta_seconds)} left` : "";
  const finished = task.status === "completed" || task.status === "failed";
  $("#cancel-task").hidden = finished;
  $("#delete-task").hidden = !finished;
  $("#rerun-task").hidden = !finished;
  const errorBox = $("#task-error");
  errorBox.hidden = !task.error;
  errorBox.textContent = task.error ? `${task.error_code ? `${task.error_code}: ` : ""}${task.error}` : "";
  const times = [["Created", task.created_at], ["Started", task.started_at], ["Finished", task.finished_at]] as const;
  $("#task-times").replaceChildren(...times.filter(([, value]) => value !== undefined).flatMap(([label, value]) => [el("dt", {}, label), el("dd", {}, formatTime(value))]));
  showElapsed(task);
  showDelivery(task);
  if (task.outputs && task.outputs.length) {
    showOutputs(task.outputs);
    showPreviews(task.outputs);
  }
}

function showOutputs(outputs: TaskOutput[]): void {
  $("#no-outputs").hidden = true;
  $("#task-outputs").replaceChildren(
    ...outputs.map((output) =>
      el(
        "li",
        {},
        el("a", { href: output.url, download: output.filename, class: "mono" }, output.filename),
        ` · ${formatBytes(output.size)} `,
        el("button", { type: "button", class: "secondary", onclick: (event) => copy(output.url, control(event)) }, "Copy URL"),
        el("input", { type: "hidden", value: output.url }),
        destinationLine(output),
        output.metadata ? el("details", {}, el("summary", {}, "Metadata"), el("pre", { class: "code" }, JSON.stringify(output.metadata, null, 2))) : null,
      ),
    ),
  );
}

/** `known.destination` is kept: the event stream does not carry it, and the page says where the outputs will go while the task runs. */
function followTask(taskId: string, known: Pick<Task, "destination">): void {
  const current = { destination: known.destination } as TaskView;
  const update = (event: Partial<TaskView>) => {
    Object.assign(current, event);
    showTask(current);
    refreshSteps(taskId);
  };
  followTaskEvents(taskId, {
    update,
    end: async (event) => {
      update(event);
      // The end event carries the outputs; re-read the task for its timestamps and steps, then the log.
      const ended = await api<Task>(taskPath(taskId));
      showTask(ended);
      showSteps(ended);
      void followDeliveries(taskId, showTask, ended);
      void loadLog(taskId);
      void awaitFirstDelivery(taskId);
    },
    lost: async () => {
      const task = await api<Task>(taskPath(taskId));
      showTask(task);
      showSteps(task);
      if (isUnfinished(task)) setTimeout(() => followTask(taskId, task), 2000);
      else void loadLog(taskId);
    },
  });
}

async function loadLog(taskId: string): Promise<void> {
  const response = await fetch(`${API}${taskPath(taskId)}/logs`, { credentials: "same-origin" });
  $("#task-log").textContent = response.ok ? await response.text() : "No log is stored for this task.";
}

/** A webhook is first tried just after the task ends: keep looking for a short while. */
async function awaitFirstDelivery(taskId: string): Promise<void> {
  for (let i = 0; i < 15; i++) {
    if ((await loadDeliveries(taskId)) > 0 || $("#redeliver").hidden) return;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

/** Shows the task's webhook deliveries; returns how many there are. */
async function loadDeliveries(taskId: string): Promise<number> {
  const list = await api<DeliveryList>(`${taskPath(taskId)}/webhooks`);
  $("#webhook-url").textContent = list.webhook_url ? `Webhook: ${list.webhook_url}` : "This task has no webhook.";
  $("#redeliver").hidden = !(list.webhook_url && list.webhook_id);
  $("#delivery-table").parentElement!.hidden = list.deliveries.length === 0;
  $("#delivery-table tbody").replaceChildren(
    ...list.deliveries.map((delivery) =>
      el(
        "tr",
        {},
        el("td", {}, `${delivery.attempt}${delivery.redelivery ? " (redelivery)" : ""}`),
        el("td", {}, formatTime(delivery.attempted_at)),
        el("td", { class: delivery.success ? "" : "error" }, delivery.status_code === null ? "no answer" : String(delivery.status_code)),
        el("td", {}, delivery.latency_ms === null ? "—" : `${delivery.latency_ms} ms`),
        el("td", {}, delivery.error || ""),
      ),
    ),
  );
  return list.deliveries.length;
}

const elapsedClock: { seconds: number | null; at: number; status: string; timer: ReturnType<typeof setInterval> | undefined } = { seconds: null, at: 0, status: "", timer: undefined };

/** The heading: "Task tsk_… · running for 12 s", ticking while the task runs. */
function showElapsed(task: TaskView): void {
  if (task.elapsed !== undefined) {
    elapsedClock.seconds = task.elapsed === null ? null : Number(task.elapsed);
    elapsedClock.at = Date.now();
  } else if (task.status === "running" && elapsedClock.seconds === null) {
    elapsedClock.seconds = 0;
    elapsedClock.at = Date.now();
  }
  if (task.status) elapsedClock.status = task.status;
  let span = document.querySelector<HTMLElement>("#task-elapsed");
  if (!span) {
    span = el("span", { id: "task-elapsed", class: "elapsed" });
    $("main h1").append(" ", span);
  }
  const shown = span;
  const render = () => {
    const { seconds, at, status } = elapsedClock;
    const running = status === "running";
    const now = seconds === null ? null : seconds + (running ? (Date.now() - at) / 1000 : 0);
    shown.textContent = now === null ? (status === "pending" ? "· waiting to start" : "") : `· ${running ? "running for" : "ran"} ${formatDuration(now)}`;
  };
  render();
  clearInterval(elapsedClock.timer);
  if (elapsedClock.status === "running") elapsedClock.timer = setInterval(render, 1000);
}

const PREVIEWS = {
  video: ["mp4", "m4v", "webm", "ogv", "mov"],
  audio: ["mp3", "m4a", "aac", "wav", "ogg", "oga", "opus", "flac", "weba"],
  image: ["jpg", "jpeg", "png", "gif", "webp", "avif", "bmp"],
};
const MAX_PREVIEWS = 4;

/** Outputs the browser can show, played or shown straight from the CDN (which serves them inline, sandboxed). */
function showPreviews(outputs: TaskOutput[]): void {
  const box = $("#task-previews");
  const figures: HTMLElement[] = [];
  for (const output of outputs) {
    const extension = output.filename.split(".").pop()!.toLowerCase();
    const kind = (Object.keys(PREVIEWS) as (keyof typeof PREVIEWS)[]).find((candidate) => PREVIEWS[candidate].includes(extension));
    if (!kind || figures.length >= MAX_PREVIEWS) continue;
    const label = `Preview of ${output.filename}`;
    const media =
      kind === "image" ? el("img", { src: output.url, alt: label, loading: "lazy" })
      : el(kind, { src: output.url, controls: true, preload: "metadata", "aria-label": label });
    figures.push(el("figure", { class: `preview preview-${kind}` }, media, el("figcaption", { class: "mono" }, output.filename)));
  }
  if (box.childElementCount !== figures.length) box.replaceChildren(...figures);
}
