/** A chained task's steps on the task page. */
import { api, taskPath } from "../api";
import { $, el, statusBadge } from "../dom";
import { formatBytes } from "../format";
import type { Task, TaskStep } from "../types";
import { destinationLine } from "./task-delivery";

function stepItem(step: TaskStep): HTMLLIElement {
  const id = `step-${step.index}`;
  return el(
    "li",
    { id, class: "card step", "data-status": step.status },
    el("h3", { id: `${id}-heading` }, `Step ${step.index} `, statusBadge(step.status), " ", el("span", { class: "hint" }, step.publish ? "outputs published" : "outputs private (for later steps only)")),
    el("pre", { class: "code", "aria-label": `Command of step ${step.index}` }, step.command),
    el("progress", { max: 100, value: step.progress, "aria-label": `Progress of step ${step.index}` }),
    ` ${step.progress}%`,
    step.error ? el("p", { class: "error" }, `Failed: ${step.error}`) : null,
    step.outputs.length
      ? el("ul", { class: "outputs", "aria-label": `Outputs of step ${step.index}` }, ...step.outputs.map((output) => el("li", {}, el("a", { href: output.url, download: output.filename, class: "mono" }, output.filename), ` · ${formatBytes(output.size)}`, destinationLine(output))))
      : null,
  );
}

/** Shows the steps of a chained task; a task without steps leaves the section hidden. */
export function showSteps(task: Pick<Task, "steps">): void {
  if (!task.steps || !task.steps.length) return;
  $("#steps-section").hidden = false;
  $("#task-steps").replaceChildren(...task.steps.map(stepItem));
}

let lastRead = 0;
let pending: ReturnType<typeof setTimeout> | undefined;

/**
 * The event stream carries the task's progress, not its steps: while a chained task runs, each
 * event re-reads the task for them, at most every 2 seconds (the last event is never dropped).
 */
export function refreshSteps(taskId: string): void {
  if ($("#steps-section").hidden) return;
  clearTimeout(pending);
  const wait = Math.max(0, lastRead + 2000 - Date.now());
  pending = setTimeout(async () => {
    lastRead = Date.now();
    // A read that fails leaves the steps as last shown: the next event, or the end, reads them again.
    showSteps(await api<Task>(taskPath(taskId)).catch(() => ({ steps: undefined })));
  }, wait);
}
