/** The task list: filter, pages, a summary per command, live rows for unfinished tasks. */
import { api, isStatus } from "../api";
import { $, announce, el, formatTime, statusBadge } from "../dom";
import { formatDuration, isUnfinished, shownStatus } from "../format";
import { followTaskEvents } from "../live";
import type { Task, TaskEvent, TaskList, TaskSummaries } from "../types";

const PAGE_SIZE = 20;
// Browsers allow six HTTP/1.1 connections per origin; each event stream holds one open, so the
// list follows at most this many tasks live and refreshes the rest by re-reading the page.
const MAX_LIVE_STREAMS = 3;
const SUMMARY_WIDTH = 90;

export async function tasksPage(): Promise<void> {
  const params = new URLSearchParams(location.search);
  const status = params.get("status") || "";
  const offset = Math.max(0, Number(params.get("offset")) || 0);
  const pageSize = Math.min(100, Math.max(1, Number(params.get("limit")) || PAGE_SIZE));
  const select = $<HTMLSelectElement>("#status");
  select.value = status;
  select.addEventListener("change", () => {
    const next = new URLSearchParams();
    if (select.value) next.set("status", select.value);
    if (params.get("limit")) next.set("limit", String(pageSize));
    location.assign(`/console/tasks?${next}`);
  });
  $("#task-filter").addEventListener("submit", (event) => event.preventDefault());
  const go = (to: number) => {
    const next = new URLSearchParams(params);
    next.set("offset", String(to));
    location.assign(`/console/tasks?${next}`);
  };
  $("#prev-page").addEventListener("click", () => go(Math.max(0, offset - pageSize)));
  $("#next-page").addEventListener("click", () => go(offset + pageSize));

  const streams = new Map<string, EventSource>();
  let refreshTimer: ReturnType<typeof setTimeout> | undefined;
  const load = async (): Promise<void> => {
    const query = new URLSearchParams({ limit: String(pageSize), offset: String(offset) });
    if (status) query.set("status", status);
    const list = await api<TaskList>(`/v1/tasks?${query}`);
    const rows = list.tasks.map((task) => taskRow(task));
    $("#task-table tbody").replaceChildren(...rows);
    await showSummaries(list.tasks);
    showEmptyTasks(list.total, status);
    $("#task-table").parentElement!.hidden = list.tasks.length === 0;
    $(".pager").hidden = list.total === 0;
    $("#page-info").textContent = list.total === 0 ? "" : `${offset + 1}–${offset + list.tasks.length} of ${list.total}`;
    $("#task-count").textContent = `Your tasks: ${list.total}`;
    $<HTMLButtonElement>("#prev-page").disabled = offset === 0;
    $<HTMLButtonElement>("#next-page").disabled = offset + list.tasks.length >= list.total;
    const active = list.tasks.filter(isUnfinished);
    for (const [id, source] of streams) {
      if (active.some((task) => task.task_id === id)) continue;
      source.close();
      streams.delete(id);
    }
    const lost = (id: string) => {
      streams.delete(id);
      clearTimeout(refreshTimer);
      refreshTimer = setTimeout(load, 5000);
    };
    for (const task of active.slice(0, MAX_LIVE_STREAMS)) if (!streams.has(task.task_id)) streams.set(task.task_id, followRow(task.task_id, load, lost));
    clearTimeout(refreshTimer);
    if (active.length > streams.size) refreshTimer = setTimeout(load, 5000);
  };
  await load();
}

/**
 * No tasks at all: the getting-started. None with the chosen status: says so, since the account
 * may well have others.
 */
function showEmptyTasks(total: number, status: string): void {
  const empty = $("#task-empty");
  empty.hidden = total > 0 || !status;
  $("#getting-started").hidden = total > 0 || Boolean(status);
  if (status && total === 0) empty.replaceChildren(`No ${status} tasks. `, el("a", { href: "/console/tasks" }, "Show all tasks"));
}

function taskRow(task: Task): HTMLTableRowElement {
  return el(
    "tr",
    { id: `row-${task.task_id}` },
    el("td", { "data-label": "Task" }, el("a", { href: `/console/tasks/${encodeURIComponent(task.task_id)}`, class: "mono" }, task.task_id)),
    el("td", { class: "command", title: task.command, "data-label": "Command" }, task.command),
    el("td", { class: "status-cell", "data-label": "Status" }, statusBadge(shownStatus(task))),
    ...taskFacts(task),
    el("td", { "data-label": "Created" }, formatTime(task.created_at)),
  );
}

/** Follows one listed task's event stream and updates its row; reloads the list when it ends. */
function followRow(taskId: string, reload: () => Promise<void>, lost: (taskId: string) => void): EventSource {
  const update = (data: TaskEvent) => {
    const row = document.getElementById(`row-${taskId}`);
    if (!row) return;
    if (data.status) row.querySelector(".status-cell")!.replaceChildren(statusBadge(shownStatus(data)));
    if (typeof data.progress === "number") {
      row.querySelector(".progress-cell")!.replaceChildren(el("progress", { max: 100, value: data.progress, "aria-label": `Progress of ${taskId}` }), ` ${data.progress}%`);
    }
  };
  return followTaskEvents(taskId, {
    update,
    end: (data, outcome) => {
      update(data);
      announce(`Task ${taskId} ${outcome}`);
      void reload();
    },
    lost: () => lost(taskId),
  });
}

/**
 * The list's duration, outputs and error cells (each with its card label for narrow screens). An
 * unfinished task's duration cell shows its progress instead, which its event stream updates.
 */
function taskFacts(task: Task): HTMLTableCellElement[] {
  const outputs = task.outputs || [];
  const names = outputs.map((output) => output.filename);
  const shown = names.length > 2 ? `${names.slice(0, 2).join(", ")} +${names.length - 2} more` : names.join(", ");
  const error = shortError(task);
  const time = isUnfinished(task)
    ? [el("progress", { max: 100, value: task.progress, "aria-label": `Progress of ${task.task_id}` }), ` ${task.progress}%`]
    : [task.elapsed === null || task.elapsed === undefined ? "—" : formatDuration(Number(task.elapsed))];
  return [
    el("td", { class: "progress-cell duration-cell", "data-label": "Duration" }, ...time),
    el("td", { class: "outputs-cell", "data-label": "Outputs", title: names.join("\n") || null }, outputs.length ? `${outputs.length} · ${shown}` : "—"),
    el("td", { class: error ? "error-cell error" : "error-cell", "data-label": "Error", title: task.error || null }, error || "—"),
  ];
}

/** The error's first line, cut short; the whole of it is the cell's title and on the task page. */
function shortError(task: Task): string {
  if (!task.error && !task.error_code) return "";
  if (shownStatus(task) === "canceled") return "canceled";
  const line = (task.error || "").split("\n").find((text) => text.trim()) || "";
  const text = `${task.error_code ? `${task.error_code}: ` : ""}${line.trim()}`;
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/** Replaces each listed command by its summary: inputs by the names they were uploaded under, outputs, options. */
async function showSummaries(tasks: Task[]): Promise<void> {
  if (!tasks.length) return;
  let summaries: TaskSummaries["summaries"];
  try {
    ({ summaries } = await api<TaskSummaries>(`/task-summaries?ids=${tasks.map((task) => encodeURIComponent(task.task_id)).join(",")}`));
  } catch (error) {
    if (isStatus(error, 401)) throw error;
    return; // The commands as written stay; the list is still usable.
  }
  for (const task of tasks) {
    const summary = summaries[task.task_id];
    const cell = document.querySelector(`#row-${CSS.escape(task.task_id)} .command`);
    if (!summary || !cell) continue;
    const text = summary.text.length > SUMMARY_WIDTH ? `${summary.text.slice(0, SUMMARY_WIDTH - 1)}…` : summary.text;
    cell.replaceChildren(text);
  }
}

