/** Presets: the built-in ones, then the user's own, each runnable from a form; the user's own saved, edited and deleted here. */
import { ApiError, api } from "../api";
import { guarded, onSubmit } from "../actions";
import { chosenDestination, destinationLabel, fillDestinationPicker } from "../destination-pick";
import { $, announce, el, flash } from "../dom";
import { clearFieldErrors, showFieldError } from "../field-errors";
import { presetFieldOf } from "../schema-form";
import type { Preset, PresetList } from "../types";
import { openRunForm, setUpRunForm } from "./preset-run";

/** Every preset, built-in first, page by page. */
async function allPresets(): Promise<Preset[]> {
  const presets: Preset[] = [];
  for (let offset = 0; ; offset += 100) {
    const page = await api<PresetList>(`/v1/presets?limit=100&offset=${offset}`);
    presets.push(...page.presets);
    if (!page.presets.length || presets.length >= page.total) return presets;
  }
}

/** "width (integer 16–8192), input (string, required)" */
function parameterSummary(preset: Preset): string {
  const required = new Set(preset.parameters.required ?? []);
  const entries = Object.entries(preset.parameters.properties).map(([name, parameter]) => {
    const range = "minimum" in parameter || "maximum" in parameter ? ` ${parameter.minimum ?? "…"}–${parameter.maximum ?? "…"}` : "";
    return `${name} (${parameter.type}${range}${required.has(name) ? ", required" : ""})`;
  });
  return entries.join(", ") || "none";
}

let editing: Preset | null = null;

export async function presetsPage(): Promise<void> {
  setUpRunForm();
  void fillDestinationPicker("preset-destination", "None");
  const form = $<HTMLFormElement>("#preset-form");
  const presets = await load();
  const wanted = new URLSearchParams(location.search).get("run");
  const toRun = wanted ? presets.find((preset) => preset.name === wanted || preset.id === wanted) : undefined;
  if (toRun) openRunForm(toRun);
  else if (wanted) flash(`There is no preset named ${wanted}: choose one below.`);

  $("#cancel-edit").addEventListener("click", () => startEditing(null));
  onSubmit(form, async (data) => {
    clearFieldErrors(form);
    let parameters: unknown;
    try {
      parameters = JSON.parse(String(data.get("parameters") || "{}"));
    } catch (error) {
      return showFieldError("preset-parameters", `This is not JSON: ${(error as Error).message}`);
    }
    const description = String(data.get("description") || "").trim();
    // Editing, no destination chosen removes the preset's (null); a new preset simply has none.
    const destination = chosenDestination("preset-destination") ?? (editing ? null : undefined);
    const body = { name: String(data.get("name") || "").trim(), command: String(data.get("command") || "").trim(), parameters, ...(description || editing ? { description } : {}), destination };
    try {
      if (editing) await api(`/v1/presets/${encodeURIComponent(editing.id)}`, { method: "PATCH", json: body });
      else await api("/v1/presets", { method: "POST", json: body });
    } catch (error) {
      const field = error instanceof ApiError ? presetFieldOf(error.problem) : undefined;
      if (field) return showFieldError(`preset-${field}`, `${error instanceof ApiError && error.problem.code ? `${error.problem.code}: ` : ""}${(error as Error).message}`);
      throw error;
    }
    announce(editing ? `Preset ${body.name} saved` : `Preset ${body.name} created`);
    startEditing(null);
    form.reset();
    await load();
  });
}

async function load(): Promise<Preset[]> {
  const presets = await allPresets();
  const own = presets.filter((preset) => !preset.builtin);
  const deliversTo = await Promise.all(own.map((preset) => destinationLabel(preset.destination)));
  $("#builtin-presets tbody").replaceChildren(...presets.filter((preset) => preset.builtin).map((preset) => row(preset)));
  $("#own-presets tbody").replaceChildren(...own.map((preset, index) => row(preset, deliversTo[index]!)));
  $("#own-empty").hidden = own.length > 0;
  $("#own-presets").parentElement!.hidden = own.length === 0;
  return presets;
}

/** `deliversTo`: the destination column of the user's own presets. */
function row(preset: Preset, deliversTo?: string): HTMLTableRowElement {
  return el(
    "tr",
    { "data-preset": preset.name },
    el("td", { class: "mono" }, preset.name),
    el("td", {}, preset.description || ""),
    el("td", { class: "command", title: preset.command }, preset.command),
    el("td", {}, parameterSummary(preset)),
    deliversTo === undefined ? null : el("td", { class: "mono" }, deliversTo),
    el(
      "td",
      { class: "actions" },
      el("button", { type: "button", "aria-label": `Run ${preset.name}`, onclick: () => openRunForm(preset) }, "Run"),
      preset.builtin ? null : el("button", { type: "button", class: "secondary", "aria-label": `Edit ${preset.name}`, onclick: () => startEditing(preset) }, "Edit"),
      preset.builtin ? null : el("button", {
        type: "button", class: "danger", "aria-label": `Delete ${preset.name}`,
        onclick: guarded(async () => {
          if (!confirm(`Delete the preset ${preset.name}?`)) return;
          await api(`/v1/presets/${encodeURIComponent(preset.id)}`, { method: "DELETE" });
          if (editing?.id === preset.id) startEditing(null);
          announce(`Preset ${preset.name} deleted`);
          await load();
        }),
      }, "Delete"),
    ),
  );
}

/** Fills the form with one of the user's presets to change it, or (null) back to a new one. */
function startEditing(preset: Preset | null): void {
  editing = preset;
  const form = $<HTMLFormElement>("#preset-form");
  clearFieldErrors(form);
  $("#preset-form-heading").textContent = preset ? `Edit ${preset.name}` : "New preset";
  $("#save-preset").textContent = preset ? "Save changes" : "Save preset";
  $("#cancel-edit").hidden = !preset;
  void fillDestinationPicker("preset-destination", "None", preset?.destination);
  if (!preset) return;
  $<HTMLInputElement>("#preset-name").value = preset.name;
  $<HTMLInputElement>("#preset-description").value = preset.description || "";
  $<HTMLTextAreaElement>("#preset-command").value = preset.command;
  $<HTMLTextAreaElement>("#preset-parameters").value = JSON.stringify(preset.parameters, null, 2);
  form.scrollIntoView({ block: "start" });
  $("#preset-name").focus();
}
