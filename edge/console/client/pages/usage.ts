/** Usage: today's processing against the daily quota, the limits, and 30 days of tasks and seconds. */
import { api } from "../api";
import { $, el, svg } from "../dom";
import { formatBytes, formatDuration } from "../format";
import type { Usage } from "../types";

type Day = Usage["days"][number];

export async function usagePage(): Promise<void> {
  const usage = await api<Usage>("/usage?days=30");
  const limits: Partial<Usage["limits"]> = usage.limits || {};
  const facts: [string, Node | string][] = [
    ["Processing today", dailyQuotaFact(usage.daily_quota)],
    ["Storage in use", formatBytes(usage.storage_bytes)],
    ["Running tasks", `${usage.running_tasks} of ${limits.max_running_tasks ?? "?"}`],
    ["Waiting tasks", String(usage.waiting_tasks)],
    ["Rate limit", limits.rate_limit ? `${limits.rate_limit.requests} requests per ${limits.rate_limit.period_seconds} s` : "—"],
    ["Largest upload", limits.max_upload_bytes ? formatBytes(limits.max_upload_bytes) : "—"],
    ["Files kept for", limits.file_ttl_seconds ? formatDuration(limits.file_ttl_seconds) : "—"],
  ];
  $("#usage-facts").replaceChildren(...facts.flatMap(([label, value]) => [el("dt", {}, label), el("dd", {}, value)]));
  barChart($("#tasks-chart"), usage.days, "tasks", "Tasks", (value) => String(value), "tasks");
  barChart($("#seconds-chart"), usage.days, "seconds", "Seconds", (value) => `${Math.round(value * 10) / 10}`, "seconds");
}

/** The daily processing quota that POST /v1/tasks enforces (429 QUOTA_EXCEEDED), counted as it counts it. */
function dailyQuotaFact(quota: Usage["daily_quota"] | undefined): HTMLElement | string {
  if (!quota) return "—";
  const seconds = (value: number) => (value < 60 ? `${Math.round(value * 10) / 10} s` : formatDuration(value));
  const used = quota.limit_seconds - quota.remaining_seconds;
  const resets = new Date(quota.resets_at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return el(
    "span",
    { id: "daily-quota" },
    `${seconds(used)} of ${seconds(quota.limit_seconds)} used`,
    el("meter", { min: 0, max: quota.limit_seconds, value: used, "aria-label": "Daily processing used" }),
    el(
      "span",
      { class: "hint" },
      `${seconds(quota.processed_seconds)} ran, ${seconds(quota.reserved_seconds)} held by unfinished tasks (each holds its time limit until it ends). `,
      `Once it is used up, new tasks are refused (429 QUOTA_EXCEEDED) until 00:00 UTC (${resets} here).`,
    ),
  );
}

/** A bar chart as inline SVG, with the same numbers in a table for screen readers. */
function barChart(figure: HTMLElement, days: Day[], field: "tasks" | "seconds", label: string, format: (value: number) => string, unit: string): void {
  const width = 600;
  const height = 190;
  const left = 36;
  const top = 22;
  const bottom = 20;
  const max = Math.max(1, ...days.map((day) => day[field]));
  const slot = (width - left) / days.length;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-hidden": "true" });
  chart.append(svg("text", { x: 0, y: 10, class: "unit" }, unit));
  for (const fraction of [0, 0.5, 1]) {
    const y = height - bottom - fraction * (height - bottom - top);
    chart.append(svg("line", { x1: left, x2: width, y1: y, y2: y }), svg("text", { x: 0, y: y + 4 }, format(max * fraction)));
  }
  days.forEach((day, index) => {
    const barHeight = (day[field] / max) * (height - bottom - top);
    const x = left + index * slot + 1;
    chart.append(svg("rect", { class: "bar", x, y: height - bottom - barHeight, width: Math.max(1, slot - 2), height: barHeight }, svg("title", {}, `${day.date}: ${format(day[field])}`)));
    if (index % 5 === 0) chart.append(svg("text", { x, y: height - 5 }, day.date.slice(5)));
    if (index === days.length - 1) chart.append(svg("text", { x: width, y: height - 5, "text-anchor": "end" }, day.date.slice(5)));
  });
  // Tables ignore the clipping of .sr-only, so a wrapper hides it.
  const table = el(
    "table",
    {},
    el("caption", {}, `${label} per day`),
    el("thead", {}, el("tr", {}, el("th", { scope: "col" }, "Date"), el("th", { scope: "col" }, label))),
    el("tbody", {}, ...days.map((day) => el("tr", {}, el("td", {}, day.date), el("td", {}, format(day[field]))))),
  );
  const total = days.reduce((sum, day) => sum + day[field], 0);
  figure.replaceChildren(chart, el("figcaption", {}, `${format(total)} in total over ${days.length} days.`), el("div", { class: "sr-only" }, table));
}
