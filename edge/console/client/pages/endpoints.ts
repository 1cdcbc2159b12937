/** The Webhooks page's registered endpoints: added (secret shown once), edited, enabled or disabled, secret rotated, deleted; their delivery log with redeliver. */
import { ApiError, api } from "../api";
import { copyButton, guarded, onSubmit } from "../actions";
import { $, announce, el, formatTime } from "../dom";
import { clearFieldErrors, showFieldError } from "../field-errors";
import type { CreatedEndpoint, Endpoint, EndpointList, EndpointLog } from "../types";

const BASE = "/v1/webhooks/endpoints";
const pathOf = (endpoint: Pick<Endpoint, "id">) => `${BASE}/${encodeURIComponent(endpoint.id)}`;

let editing: Endpoint | null = null;

export async function setUpEndpoints(): Promise<void> {
  const form = $<HTMLFormElement>("#endpoint-form");
  copyButton("#copy-endpoint-secret", "#endpoint-secret-value");
  $("#cancel-endpoint-edit").addEventListener("click", () => startEditing(null));
  onSubmit(form, async (data) => {
    clearFieldErrors(form);
    const events = data.getAll("events").map(String);
    if (!events.length) return showFieldError("endpoint-events-fieldset", "Choose at least one event to send to this endpoint.");
    const url = String(data.get("url") || "").trim();
    const description = String(data.get("description") || "").trim();
    const changing = editing;
    let saved: Endpoint | CreatedEndpoint;
    try {
      saved = changing
        ? await api<Endpoint>(pathOf(changing), { method: "PATCH", json: { url, events, description: description || null } })
        : await api<CreatedEndpoint>(BASE, { method: "POST", json: { url, events, ...(description ? { description } : {}) } });
    } catch (error) {
      const field = fieldOf(error);
      if (field) return showFieldError(field, (error as Error).message);
      throw error;
    }
    startEditing(null);
    if (changing) announce(`Endpoint ${saved.url} saved`);
    else showSecret(saved.url, (saved as CreatedEndpoint).secret);
    await load();
  });
  await load();
}

/** The field a refusal is about: the events or description a validation problem names, else the URL (a refused host, a bad URL). */
function fieldOf(error: unknown): string | undefined {
  if (!(error instanceof ApiError) || error.status >= 500 || ["ENDPOINT_LIMIT_REACHED", "RATE_LIMITED"].includes(error.problem.code ?? "")) return undefined;
  const named = (error.problem.issues ?? []).map((issue) => String(issue.path[0] ?? ""));
  if (named.includes("events")) return "endpoint-events-fieldset";
  if (named.includes("description")) return "endpoint-description";
  return "endpoint-url";
}

/** Fills the form with an endpoint to change its URL, events and description, or (null) back to adding one. */
function startEditing(endpoint: Endpoint | null): void {
  editing = endpoint;
  const form = $<HTMLFormElement>("#endpoint-form");
  clearFieldErrors(form);
  form.reset();
  $("#endpoint-form-heading").textContent = endpoint ? "Edit endpoint" : "Add an endpoint";
  $("#add-endpoint").textContent = endpoint ? "Save changes" : "Add endpoint";
  $("#cancel-endpoint-edit").hidden = !endpoint;
  if (!endpoint) return;
  $<HTMLInputElement>("#endpoint-url").value = endpoint.url;
  $<HTMLInputElement>("#endpoint-description").value = endpoint.description ?? "";
  for (const box of form.querySelectorAll<HTMLInputElement>('input[name="events"]')) box.checked = endpoint.events.includes(box.value as Endpoint["events"][number]);
  form.scrollIntoView({ block: "start" });
  $("#endpoint-url").focus();
}

function showSecret(url: string, secret: string): void {
  $("#endpoint-secret").hidden = false;
  $("#endpoint-secret-url").textContent = url;
  const value = $<HTMLInputElement>("#endpoint-secret-value");
  value.value = secret;
  value.focus();
  announce("Signing secret shown. Copy it now: it is shown only once.");
}

async function load(): Promise<void> {
  const { endpoints } = await api<EndpointList>(BASE);
  $("#endpoint-table tbody").replaceChildren(...endpoints.map(row));
  $("#endpoint-empty").hidden = endpoints.length > 0;
  $("#endpoint-table").parentElement!.hidden = endpoints.length === 0;
}

function row(endpoint: Endpoint): HTMLTableRowElement {
  const button = (label: string, action: () => Promise<unknown>, kind = "secondary") =>
    el("button", { type: "button", class: kind, "aria-label": `${label} ${endpoint.url}`, onclick: guarded(action) }, label);
  return el(
    "tr",
    { "data-endpoint": endpoint.id },
    el("td", {}, el("span", { class: "mono" }, endpoint.url), endpoint.description ? el("span", { class: "hint" }, endpoint.description) : null),
    el("td", {}, endpoint.events.join(", ")),
    el("td", {}, endpoint.enabled ? "yes" : "no (disabled)"),
    el(
      "td",
      { class: "actions" },
      button("Edit", async () => startEditing(endpoint)),
      button(endpoint.enabled ? "Disable" : "Enable", async () => {
        await api(pathOf(endpoint), { method: "PATCH", json: { enabled: !endpoint.enabled } });
        announce(`Endpoint ${endpoint.enabled ? "disabled" : "enabled"}`);
        await load();
      }),
      button("Rotate secret", async () => {
        if (!confirm(`Replace the signing secret of ${endpoint.url}? Update the receiver with the new one.`)) return;
        const { secret } = await api<{ secret: string }>(`${pathOf(endpoint)}/rotate-secret`, { method: "POST" });
        showSecret(endpoint.url, secret);
      }),
      button("Deliveries", () => showLog(endpoint)),
      button("Delete", async () => {
        if (!confirm(`Delete the endpoint ${endpoint.url}, its secret and its delivery log?`)) return;
        await api(pathOf(endpoint), { method: "DELETE" });
        if (editing?.id === endpoint.id) startEditing(null);
        if ($("#endpoint-log").dataset.endpoint === endpoint.id) $("#endpoint-log").hidden = true;
        announce("Endpoint deleted");
        await load();
      }, "danger"),
    ),
  );
}

async function showLog(endpoint: Endpoint): Promise<void> {
  const { events } = await api<EndpointLog>(`${pathOf(endpoint)}/deliveries`);
  const section = $("#endpoint-log");
  section.dataset.endpoint = endpoint.id;
  section.hidden = false;
  $("#endpoint-log-url").textContent = endpoint.url;
  $("#endpoint-events tbody").replaceChildren(
    ...events.map((event) => {
      const last = event.attempts.at(-1);
      return el(
        "tr",
        {},
        el("td", { class: "mono" }, event.type),
        el("td", {}, event.task_id ? el("a", { href: `/console/tasks/${encodeURIComponent(event.task_id)}`, class: "mono" }, event.task_id) : "—"),
        el("td", {}, formatTime(event.created_at)),
        el("td", { class: event.delivered ? "" : "error" }, event.delivered ? "yes" : `not yet (${event.attempts.length} attempt(s))`),
        el("td", {}, last ? (last.status_code === null ? last.error || "no answer" : String(last.status_code)) : "—"),
        el("td", { class: "actions" }, el("button", {
          type: "button", class: "secondary", "aria-label": `Redeliver ${event.event_id}`,
          onclick: guarded(async () => {
            await api(`${pathOf(endpoint)}/deliveries/${encodeURIComponent(event.event_id)}/redeliver`, { method: "POST" });
            announce("Redelivery queued");
            setTimeout(() => void showLog(endpoint), 2000);
          }),
        }, "Redeliver")),
      );
    }),
  );
  $("#endpoint-log-empty").hidden = events.length > 0;
  $("#endpoint-events").parentElement!.hidden = events.length === 0;
}
