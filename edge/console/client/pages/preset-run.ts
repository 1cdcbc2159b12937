/** A preset's run form, generated from its parameters' JSON Schema; a run is POST /v1/tasks {preset, params}. */
import { ApiError, api } from "../api";
import { onSubmit } from "../actions";
import { chosenDestination, fillDestinationPicker } from "../destination-pick";
import { $, announce, el } from "../dom";
import { clearFieldErrors, showFieldError } from "../field-errors";
import { fileIdentity, fileName, pageFiles } from "../files";
import { type FormField, formFields, paramsOf } from "../schema-form";
import type { CreatedTask, Preset } from "../types";

let shown: { preset: Preset; fields: FormField[] } | null = null;

/** Wires the run form once; openRunForm() fills it for one preset. */
export function setUpRunForm(): void {
  const form = $<HTMLFormElement>("#run-form");
  $("#close-run").addEventListener("click", () => {
    $("#run-section").hidden = true;
    shown = null;
  });
  onSubmit(form, async () => {
    if (!shown) return;
    clearFieldErrors(form);
    const { preset, fields } = shown;
    const params = paramsOf(fields, (name) => {
      const input = $<HTMLInputElement | HTMLSelectElement>(`#param-${name}`);
      return input instanceof HTMLInputElement && input.type === "checkbox" ? input.checked : input.value;
    });
    let created: CreatedTask;
    try {
      const destination = chosenDestination("run-destination");
      created = await api<CreatedTask>("/v1/tasks", { method: "POST", json: { preset: preset.builtin ? preset.name : preset.id, params, ...(destination ? { destination } : {}) } });
    } catch (error) {
      const param = error instanceof ApiError ? error.problem.param : undefined;
      if (error instanceof ApiError && error.problem.code === "PRESET_PARAMS_INVALID" && param && fields.some((field) => field.name === param)) {
        return showFieldError(`param-${param}`, error.message);
      }
      throw error;
    }
    location.assign(`/console/tasks/${encodeURIComponent(created.task_id)}`);
  });
}

export function openRunForm(preset: Preset): void {
  const fields = formFields(preset.parameters);
  shown = { preset, fields };
  $("#run-name").textContent = preset.name;
  $("#run-description").textContent = preset.description || "";
  $("#run-command").textContent = preset.command;
  $("#run-fields").replaceChildren(
    ...(fields.length ? fields.map(fieldElement) : [el("p", { class: "hint" }, "This preset has no parameters.")]),
  );
  void fillDestinationPicker("run-destination", preset.destination ? "The preset's own destination" : "None: keep the outputs here only");
  const section = $("#run-section");
  section.hidden = false;
  section.scrollIntoView({ block: "start" });
  const first = section.querySelector<HTMLElement>("#run-fields input, #run-fields select");
  (first ?? $<HTMLElement>("#run-preset")).focus();
  announce(`Run form for ${preset.name}`);
}

function fieldElement(field: FormField): HTMLElement {
  const id = `param-${field.name}`;
  const describedBy = [field.description && `${id}-hint`, `${id}-error`].filter(Boolean).join(" ");
  const label = el("label", { for: id }, field.label, field.required ? el("span", { class: "required" }, " (required)") : null);
  const hint = field.description ? el("span", { id: `${id}-hint`, class: "hint" }, field.description) : null;
  const error = el("span", { id: `${id}-error`, class: "field-error", hidden: true });
  const common = { id, name: field.name, required: field.required, "aria-describedby": describedBy };
  if (field.control === "checkbox") {
    return el("p", { class: "field" }, el("input", { ...common, type: "checkbox", checked: field.initial === "true" }), el("label", { for: id }, field.label), hint, error);
  }
  let control: HTMLInputElement | HTMLSelectElement;
  if (field.control === "select") {
    control = el("select", common, ...(field.required && field.initial === "" ? [el("option", { value: "" }, "Choose…")] : []), ...field.options!.map((option) => el("option", { value: option, selected: option === field.initial }, option)));
  } else if (field.control === "number") {
    control = el("input", { ...common, type: "number", inputmode: field.type === "integer" ? "numeric" : "decimal", min: field.min, max: field.max, step: field.step, value: field.initial, placeholder: field.example });
  } else {
    control = el("input", { ...common, type: "text", minlength: field.minLength, maxlength: field.maxLength, pattern: field.pattern, value: field.initial, placeholder: field.example, autocapitalize: "off", spellcheck: "false" });
  }
  const range = field.control === "number" ? rangeHint(field) : null;
  return el("p", { class: "field" }, label, hint, range, control, field.fileInput ? filePicker(field, control as HTMLInputElement) : null, error);
}

/** "A whole number from 16 to 4096", "A number of at least 0.5". */
function rangeHint(field: FormField): HTMLElement | null {
  const kind = field.type === "integer" ? "A whole number" : "A number";
  const { min, max } = field;
  const text = min !== undefined && max !== undefined ? `${kind} from ${min} to ${max}` : min !== undefined ? `${kind} of at least ${min}` : max !== undefined ? `${kind} of at most ${max}` : null;
  return text ? el("span", { class: "hint" }, text) : null;
}

/** For a parameter that reads an input: pick one of the user's files, its URL goes into the field. */
function filePicker(field: FormField, input: HTMLInputElement): HTMLElement | null {
  const files = pageFiles();
  if (!files.length) return null;
  const id = `param-${field.name}-file`;
  const select = el(
    "select",
    { id, onchange: (event) => { const value = (event.currentTarget as HTMLSelectElement).value; if (value) input.value = value; } },
    el("option", { value: "" }, "Choose one of your files…"),
    ...files.map((file) => el("option", { value: file.url }, `${fileName(file)} (${fileIdentity(file)})`)),
  );
  return el("span", { class: "file-pick" }, el("label", { for: id, class: "hint" }, `Or use one of your files as ${field.label}`), select);
}
