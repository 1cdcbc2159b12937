/** The task page's tools: the same task as curl, CLI and SDK snippets; edit; run again. */
import { api, taskPath } from "../api";
import { copy, control, guarded } from "../actions";
import { $, el } from "../dom";
import type { CreatedTask, DeliveryList, Task } from "../types";

/** POSIX shell quoting inside double quotes. */
function shellDoubleQuoted(text: string): string {
  return `"${text.replace(/(["\\$`])/g, "\\$1")}"`;
}

function shellSingleQuoted(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/** The same task from a terminal or a program, with this deployment's URL and a placeholder for the key. */
function snippetsFor(task: Task): [label: string, text: string][] {
  const base = (document.body.dataset.apiUrl || location.origin).replace(/\/$/, "");
  const body: { command: string; with_metadata?: true } = { command: task.command };
  if (task.with_metadata) body.with_metadata = true;
  return [
    ["curl", `curl -X POST ${base}/v1/tasks \\\n  -H "Authorization: Bearer $FFEDGE_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d ${shellSingleQuoted(JSON.stringify(body))}`],
    ["CLI", `export FFEDGE_URL=${base} FFEDGE_API_KEY=ffe_…\nffedge run ${shellDoubleQuoted(task.command)}`],
    ["SDK", `import { FFedge } from "@ffedge/sdk";\n\nconst ff = new FFedge({ apiKey: process.env.FFEDGE_API_KEY, baseUrl: ${JSON.stringify(base)} });\nconst task = await ff.run(${JSON.stringify(task.command)});\nconsole.log(task.outputs);`],
  ];
}

function showSnippets(task: Task): void {
  $("#copy-snippets").replaceChildren(
    ...snippetsFor(task).map(([label, text]) => {
      const id = `snippet-${label.toLowerCase()}`;
      return el(
        "div",
        { class: "snippet" },
        el("p", { class: "copyrow" }, el("strong", { id: `${id}-label` }, label), " ", el("button", { type: "button", class: "secondary", "aria-label": `Copy as ${label}`, onclick: (event) => copy(text, control(event)) }, "Copy"), el("input", { type: "hidden", value: text })),
        el("pre", { class: "code", id, "aria-labelledby": `${id}-label`, tabindex: 0 }, text),
      );
    }),
  );
}

function randomKey(): string {
  return [...crypto.getRandomValues(new Uint8Array(16))].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** Run again: the same command as a new task through the public API, once per click (a fresh Idempotency-Key). */
export function setUpTaskTools(task: Task): void {
  showSnippets(task);
  $<HTMLAnchorElement>("#edit-task").href = `/console/new?from=${encodeURIComponent(task.task_id)}`;
  $("#rerun-task").addEventListener("click", guarded(async () => {
    const body: { command: string; with_metadata: boolean; webhook?: string } = { command: task.command, with_metadata: Boolean(task.with_metadata) };
    // Webhooks that cannot be read leave the re-run without one, like a task that had none.
    const hooks = await api<DeliveryList>(`${taskPath(task.task_id)}/webhooks`).catch(() => null);
    if (hooks && hooks.webhook_url) body.webhook = hooks.webhook_url;
    const created = await api<CreatedTask>("/v1/tasks", { method: "POST", json: body, headers: { "Idempotency-Key": `console-rerun-${randomKey()}` } });
    location.assign(`/console/tasks/${encodeURIComponent(created.task_id)}`);
  }));
}
