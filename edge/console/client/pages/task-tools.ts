/** The task page's tools: the same task as curl, CLI and SDK snippets; edit; run again. */
import { api, taskPath } from "../api";
import { copy, control, guarded } from "../actions";
import { $, el } from "../dom";
import type { CreatedTask, Task } from "../types";

/** POSIX shell quoting inside double quotes. */
function shellDoubleQuoted(text: string): string {
  return `"${text.replace(/(["\\$`])/g, "\\$1")}"`;
}

function shellSingleQuoted(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

/**
 * The same task from a terminal or a program, with this deployment's URL and a placeholder for the
 * key: its command (or its steps), metadata choice and destination. The CLI runs single commands.
 */
function snippetsFor(task: Task): [label: string, text: string][] {
  const base = (document.body.dataset.apiUrl || location.origin).replace(/\/$/, "");
  const what = task.steps ? { steps: task.steps.map((step) => (step.publish ? { command: step.command } : { command: step.command, publish: false })) } : { command: task.command };
  const body = { ...what, ...(task.with_metadata ? { with_metadata: true } : {}), ...(task.destination ? { destination: task.destination } : {}) };
  const plain = !task.steps && !task.with_metadata && !task.destination;
  const cliDestination = task.destination ? ` --destination ${task.destination.id}${task.destination.mode === "only" ? ":only" : ""}` : "";
  const snippets: [string, string][] = [
    ["curl", `curl -X POST ${base}/v1/tasks \\\n  -H "Authorization: Bearer $FFEDGE_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -d ${shellSingleQuoted(JSON.stringify(body))}`],
    ["CLI", `export FFEDGE_URL=${base} FFEDGE_API_KEY=ffe_…\nffedge run${cliDestination} ${shellDoubleQuoted(task.command)}`],
    ["SDK", `import { FFedge } from "@ffedge/sdk";\n\nconst ff = new FFedge({ apiKey: process.env.FFEDGE_API_KEY, baseUrl: ${JSON.stringify(base)} });\nconst task = await ff.run(${plain ? JSON.stringify(task.command) : JSON.stringify(body, null, 2)});\nconsole.log(task.outputs);`],
  ];
  return task.steps ? snippets.filter(([label]) => label !== "CLI") : snippets;
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

/**
 * Run again: POST /v1/tasks/{id}/retry, so the new task has what this one was submitted with (its
 * command or steps, metadata choice, webhook, time limit), once per click (a fresh Idempotency-Key).
 */
export function setUpTaskTools(task: Task): void {
  showSnippets(task);
  $<HTMLAnchorElement>("#edit-task").href = `/console/new?from=${encodeURIComponent(task.task_id)}`;
  // The composer writes one command: a chained task is run again as it is, or submitted through the API.
  $("#edit-task").hidden = Boolean(task.steps);
  $("#rerun-task").addEventListener("click", guarded(async () => {
    const created = await api<CreatedTask>(`${taskPath(task.task_id)}/retry`, { method: "POST", headers: { "Idempotency-Key": `console-retry-${randomKey()}` } });
    location.assign(`/console/tasks/${encodeURIComponent(created.task_id)}`);
  }));
}
