/** Destinations: the user's S3-compatible buckets for task outputs; added, edited, tested (a probe object written and deleted) and deleted. */
import { ApiError, api } from "../api";
import { guarded, onSubmit } from "../actions";
import { $, announce, el } from "../dom";
import { clearFieldErrors, showFieldError } from "../field-errors";
import type { Destination, DestinationList } from "../types";

const FIELDS = ["name", "endpoint", "region", "bucket", "prefix", "access_key_id", "secret_access_key", "path_style"] as const;
const KEEP_CREDENTIALS = "Leave both key fields empty to keep the stored key pair; fill both to replace it.";
const pathOf = (destination: Pick<Destination, "id">) => `/v1/destinations/${encodeURIComponent(destination.id)}`;

let editing: Destination | null = null;

export async function destinationsPage(): Promise<void> {
  const form = $<HTMLFormElement>("#destination-form");
  $("#cancel-destination-edit").addEventListener("click", () => startEditing(null));
  onSubmit(form, async (data) => {
    clearFieldErrors(form);
    const text = (name: string) => String(data.get(name) || "").trim();
    const keyId = text("access_key_id");
    const secret = String(data.get("secret_access_key") || "");
    // The API would take either half alone; the page asks for both so a pair is never half replaced by mistake.
    if (editing && Boolean(keyId) !== Boolean(secret)) {
      const missing = keyId ? "secret access key" : "access key id";
      return showFieldError(keyId ? "destination-secret_access_key" : "destination-access_key_id", `Fill in the ${missing} too to replace the stored key pair, or empty both key fields to keep it.`);
    }
    const body: Record<string, unknown> = { name: text("name"), region: text("region"), bucket: text("bucket") };
    if (editing) {
      // Emptied fields mean "none": AWS S3 rather than a custom endpoint, no prefix.
      Object.assign(body, { endpoint: text("endpoint") || null, prefix: text("prefix") });
      if (keyId) Object.assign(body, { access_key_id: keyId, secret_access_key: secret });
    } else {
      Object.assign(body, { type: "s3", access_key_id: keyId, secret_access_key: secret });
      if (text("endpoint")) body.endpoint = text("endpoint");
      if (text("prefix")) body.prefix = text("prefix");
    }
    if (data.get("path_style")) body.path_style = data.get("path_style") === "true";
    const changing = editing;
    let saved: Destination;
    try {
      saved = await api<Destination>(changing ? pathOf(changing) : "/v1/destinations", { method: changing ? "PATCH" : "POST", json: body });
    } catch (error) {
      const field = fieldOf(error);
      if (field) return showFieldError(`destination-${field}`, `${(error as ApiError).problem.code ? `${(error as ApiError).problem.code}: ` : ""}${(error as Error).message}`);
      throw error;
    }
    // The secret leaves the page with the request: nothing shows it back.
    startEditing(null);
    announce(changing ? `Destination ${saved.name} saved; testing it` : `Destination ${saved.name} added`);
    await load();
    // A changed destination is tested at once, so a wrong prefix, bucket or key shows now rather than on a task's outputs.
    if (changing) await runTest(saved, $(`#destination-table tr[data-destination-id="${CSS.escape(saved.id)}"] .test-result`));
  });
  await load();
}

/** The form field a refusal names: a validation problem's path, a taken name, a refused endpoint URL. */
function fieldOf(error: unknown): (typeof FIELDS)[number] | undefined {
  if (!(error instanceof ApiError)) return undefined;
  const { problem } = error;
  if (problem.code === "DESTINATION_NAME_TAKEN") return "name";
  if (problem.code === "URL_HOST_BLOCKED" || problem.code === "URL_NOT_ALLOWED") return "endpoint";
  const named = [problem.field, ...(problem.issues ?? []).map((issue) => String(issue.path[0] ?? ""))];
  return FIELDS.find((field) => named.includes(field));
}

async function load(): Promise<void> {
  const { destinations } = await api<DestinationList>("/v1/destinations");
  $("#destination-table tbody").replaceChildren(...destinations.map(row));
  $("#destination-empty").hidden = destinations.length > 0;
  $("#destination-table").parentElement!.hidden = destinations.length === 0;
}

/** Fills the form with a destination to change it (credentials stay empty: write-only), or (null) back to adding one. */
function startEditing(destination: Destination | null): void {
  editing = destination;
  const form = $<HTMLFormElement>("#destination-form");
  clearFieldErrors(form);
  form.reset();
  $("#destination-form-heading").textContent = destination ? `Edit ${destination.name}` : "Add a destination";
  $("#add-destination").textContent = destination ? "Save changes" : "Add destination";
  $("#cancel-destination-edit").hidden = !destination;
  $("#destination-credentials-hint").textContent = destination ? `Stored key pair: ${destination.credentials_fingerprint}. ${KEEP_CREDENTIALS}` : "";
  for (const name of ["access_key_id", "secret_access_key"]) $<HTMLInputElement>(`#destination-${name}`).required = !destination;
  if (!destination) return;
  const values: Record<string, string> = { name: destination.name, endpoint: destination.endpoint ?? "", region: destination.region, bucket: destination.bucket, prefix: destination.prefix, path_style: String(destination.path_style) };
  for (const [name, value] of Object.entries(values)) $<HTMLInputElement>(`#destination-${name}`).value = value;
  form.scrollIntoView({ block: "start" });
  $("#destination-name").focus();
}

/** Writes and deletes a probe object with the stored settings; the outcome in `result`. */
async function runTest(destination: Destination, result: HTMLElement): Promise<void> {
  result.className = "test-result";
  result.textContent = "Testing…";
  try {
    await api(`${pathOf(destination)}/test`, { method: "POST" });
    result.className = "test-result ok";
    result.textContent = "OK: a probe object was written and deleted";
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    result.className = "test-result error";
    result.textContent = `${error.problem.code || error.status}: ${error.message}`;
  }
  announce(`Test of ${destination.name}: ${result.textContent}`);
}

/** Deletes after confirmation; presets naming the destination keep it (DESTINATION_IN_USE), said in its row with the way out. */
async function remove(destination: Destination, result: HTMLElement): Promise<void> {
  if (!confirm(`Delete the destination ${destination.name}? Deliveries still pending to it will fail.`)) return;
  try {
    await api(pathOf(destination), { method: "DELETE" });
  } catch (error) {
    if (!(error instanceof ApiError) || error.problem.code !== "DESTINATION_IN_USE") throw error;
    const presets = error.problem.presets ?? [];
    result.className = "test-result error";
    result.replaceChildren(
      `DESTINATION_IN_USE: not deleted, because your preset${presets.length === 1 ? "" : "s"} ${presets.join(", ")} deliver${presets.length === 1 ? "s" : ""} to it. `,
      el("a", { href: "/console/presets" }, "Change or clear their destination on the Presets page"),
      ", then delete it.",
    );
    return announce(result.textContent ?? "");
  }
  if (editing?.id === destination.id) startEditing(null);
  announce(`Destination ${destination.name} deleted`);
  await load();
}

function row(destination: Destination): HTMLTableRowElement {
  const result = el("span", { class: "test-result", "aria-live": "polite" });
  const button = (label: string, kind: string, action: () => unknown) =>
    el("button", { type: "button", class: kind, "aria-label": `${label} ${destination.name}`, onclick: guarded(async () => action()) }, label);
  return el(
    "tr",
    { "data-destination": destination.name, "data-destination-id": destination.id },
    el("td", { class: "mono" }, destination.name),
    el("td", { class: "mono" }, `${destination.bucket}${destination.prefix ? `/${destination.prefix}` : ""}`),
    el("td", { class: "mono" }, destination.endpoint || `AWS S3 (${destination.region})`),
    el("td", { class: "mono" }, destination.credentials_fingerprint),
    el("td", {}, result),
    el(
      "td",
      { class: "actions" },
      button("Test", "secondary", () => runTest(destination, result)),
      button("Edit", "secondary", () => startEditing(destination)),
      button("Delete", "danger", () => remove(destination, result)),
    ),
  );
}
