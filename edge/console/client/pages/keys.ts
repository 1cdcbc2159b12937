/** API keys: the list with revocation, and a new key shown once. */
import { api } from "../api";
import { copyButton, guarded, onSubmit } from "../actions";
import { $, announce, el, formatTime } from "../dom";
import type { ApiKeyList, CreatedApiKey } from "../types";

export async function keysPage(): Promise<void> {
  const render = async (): Promise<void> => {
    const { keys } = await api<ApiKeyList>("/keys");
    $("#key-table tbody").replaceChildren(
      ...keys.map((key) =>
        el(
          "tr",
          {},
          el("td", {}, key.name || "(unnamed)"),
          el("td", { class: "mono" }, key.prefix),
          el("td", {}, formatTime(key.created_at)),
          el("td", {}, key.last_used_at ? formatTime(key.last_used_at) : "never"),
          el(
            "td",
            {},
            key.revoked_at
              ? el("span", {}, "revoked ", formatTime(key.revoked_at))
              : el("button", { type: "button", class: "danger", "aria-label": `Revoke ${key.name || key.prefix}`, onclick: guarded(async () => {
                  if (!confirm(`Revoke ${key.name || key.prefix}? Programs using it stop working at once.`)) return;
                  await api(`/keys/${encodeURIComponent(key.id)}`, { method: "DELETE" });
                  announce(`Key ${key.prefix} revoked`);
                  await render();
                }) }, "Revoke"),
          ),
        ),
      ),
    );
  };
  await render();
  onSubmit($<HTMLFormElement>("#key-form"), async (form) => {
    const created = await api<CreatedApiKey>("/keys", { method: "POST", json: { name: String(form.get("name")).trim() } });
    $<HTMLFormElement>("#key-form").reset();
    $("#new-key").hidden = false;
    const value = $<HTMLInputElement>("#new-key-value");
    value.value = created.key;
    value.focus();
    value.select();
    announce("Key created. Copy it now: it is shown only once.");
    await render();
  });
  copyButton("#copy-key", "#new-key-value");
}
