/** The command composer: checked as it is typed, filled from a file, a recipe or an earlier task. */
import { ApiError, api, taskPath } from "../api";
import { messageOf, onSubmit } from "../actions";
import { $, el, flash } from "../dom";
import { chosenDestination, fillDestinationPicker } from "../destination-pick";
import { fileIdentity, fileKind, fileName, pageFiles } from "../files";
import type { CreatedTask, PresetList, StoredFile, Task, Validation } from "../types";

const NO_DESTINATION = "None: keep the outputs here only";

type Verdict = { ok: true; body: Validation } | { ok: false; error: ApiError };

export async function composerPage(): Promise<void> {
  const textarea = $<HTMLTextAreaElement>("#command");
  const verdict = $("#verdict");
  const marked = $("#command-marked");
  let sequence = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;

  const check = async () => {
    const command = textarea.value.trim();
    const mine = ++sequence;
    if (!command) {
      verdict.textContent = "";
      verdict.className = "verdict";
      marked.hidden = true;
      textarea.removeAttribute("aria-invalid");
      return;
    }
    let answer: Verdict;
    try {
      answer = { ok: true, body: await api<Validation>("/v1/tasks/validate", { method: "POST", json: { command } }) };
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      answer = { ok: false, error };
    }
    if (mine !== sequence) return;
    if (answer.ok) {
      verdict.className = "verdict ok";
      verdict.textContent = `Accepted: ${answer.body.inputs.length} input(s), outputs ${answer.body.outputs.join(", ") || "none"}.`;
      textarea.setAttribute("aria-invalid", "false");
      marked.hidden = true;
    } else {
      verdict.className = "verdict bad";
      verdict.textContent = `Refused (${answer.error.problem.code || answer.error.status}): ${answer.error.message}`;
      textarea.setAttribute("aria-invalid", "true");
      showRefusedToken(marked, textarea.value, answer.error.problem.token);
    }
  };
  textarea.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => check().catch((error: unknown) => flash(messageOf(error))), 300);
  });

  const picker = $<HTMLSelectElement>("#file-pick");
  const files = pageFiles();
  picker.replaceChildren(
    el("option", { value: "" }, files.length ? "Choose a file…" : "No files yet: upload on the Files page"),
    ...files.map((file) => el("option", { value: file.url }, `${fileName(file)} (${fileIdentity(file)})`)),
  );
  for (const button of document.querySelectorAll<HTMLButtonElement>("#recipes [data-recipe]")) button.addEventListener("click", () => applyRecipe(button, files, picker, textarea));
  void listPresets();
  const from = new URLSearchParams(location.search).get("from");
  if (from) {
    const source = await api<Task>(taskPath(from));
    textarea.value = source.command;
    $<HTMLInputElement>("#with-metadata").checked = Boolean(source.with_metadata);
    textarea.dispatchEvent(new Event("input"));
    void fillDestinationPicker("composer-destination", NO_DESTINATION, source.destination);
  } else void fillDestinationPicker("composer-destination", NO_DESTINATION);
  $("#insert-input").addEventListener("click", () => {
    if (!picker.value) return;
    const position = textarea.selectionStart ?? textarea.value.length;
    const before = textarea.value.slice(0, position);
    const insertion = `${before && !before.endsWith(" ") ? " " : ""}-i ${picker.value} `;
    textarea.value = before + insertion + textarea.value.slice(position);
    textarea.focus();
    textarea.selectionStart = textarea.selectionEnd = position + insertion.length;
    textarea.dispatchEvent(new Event("input"));
  });

  onSubmit($<HTMLFormElement>("#composer"), async (form) => {
    const body: { command: string; with_metadata: boolean; webhook?: string; destination?: object } = { command: textarea.value.trim(), with_metadata: form.get("with_metadata") === "on" };
    const destination = chosenDestination("composer-destination");
    if (destination) body.destination = destination;
    const webhook = String(form.get("webhook") || "").trim();
    if (webhook) body.webhook = webhook;
    const created = await api<CreatedTask>("/v1/tasks", { method: "POST", json: body });
    location.assign(`/console/tasks/${encodeURIComponent(created.task_id)}`);
  });
}

/** Shows the command with the refused token marked, built from text nodes only. */
function showRefusedToken(container: HTMLElement, command: string, token: string | undefined): void {
  const at = token ? command.indexOf(token) : -1;
  if (!token || at < 0) {
    container.hidden = true;
    return;
  }
  container.replaceChildren(command.slice(0, at), el("mark", {}, token), command.slice(at + token.length));
  container.hidden = false;
}

const WHAT = { video: "a video", image: "an image (PNG or JPEG)", subtitles: "a subtitles file (SRT, VTT or ASS)" } as Record<string, string>;

/** Fills the composer from a recipe: the picked file as its video, the newest file of each other kind it needs. */
function applyRecipe(button: HTMLButtonElement, files: StoredFile[], picker: HTMLSelectElement, textarea: HTMLTextAreaElement): void {
  const kinds = button.dataset.inputs!.split(",");
  const picked = files.find((file) => file.url === picker.value);
  const newest = (kind: string) => files.find((file) => fileKind(file) === kind);
  const chosen = (kind: string) => (kind === "video" && picked && fileKind(picked) === "video" ? picked : newest(kind));
  const missing: string[] = [];
  let command = button.dataset.command!;
  for (const kind of kinds) {
    const file = chosen(kind);
    if (file) command = command.split(`{${kind}}`).join(file.url);
    else missing.push(kind);
  }
  textarea.value = command;
  textarea.dispatchEvent(new Event("input"));
  textarea.focus();
  $("#recipe-note").textContent = missing.length
    ? `Replace ${missing.map((kind) => `{${kind}}`).join(" and ")} with the URL of ${missing.map((kind) => WHAT[kind]).join(" and ")}, or upload one on the Files page.`
    : `${button.textContent}: filled with ${kinds.map((kind) => fileName(chosen(kind)!)).join(" and ")}.`;
}

/** "From a preset": every preset, each a link to its run form on the Presets page. */
async function listPresets(): Promise<void> {
  const list = $("#preset-links");
  try {
    const { presets } = await api<PresetList>("/v1/presets?limit=100");
    list.replaceChildren(
      ...presets.map((preset) =>
        el("li", {}, el("a", { href: `/console/presets?run=${encodeURIComponent(preset.name)}`, "aria-describedby": preset.description ? `preset-${preset.id}` : null }, preset.name), preset.description ? el("span", { id: `preset-${preset.id}`, class: "hint" }, preset.description) : null),
      ),
    );
  } catch (error) {
    list.replaceChildren(el("li", { class: "error" }, `Presets could not be listed: ${messageOf(error)}`));
  }
}
