/** Webhooks: registered endpoints, the signing secret's rotation, and the latest deliveries of recent tasks. */
import { api, taskPath } from "../api";
import { copyButton, guarded } from "../actions";
import { $, announce, el, formatTime } from "../dom";
import type { DeliveryList, TaskList, WebhookSecret } from "../types";
import { setUpEndpoints } from "./endpoints";

export async function webhooksPage(): Promise<void> {
  $("#rotate-secret").addEventListener("click", guarded(async () => {
    if (!confirm("Rotate the signing secret? A new secret replaces the current one, which keeps signing only for a while: update your receivers with the new one.")) return;
    const secret = await api<WebhookSecret>("/v1/webhook-secret/rotate", { method: "POST" });
    $("#secret-box").hidden = false;
    const value = $<HTMLInputElement>("#secret-value");
    value.value = secret.secret;
    $("#secret-note").textContent = secret.previous_valid_until ? `The previous secret also signs deliveries until ${new Date(secret.previous_valid_until).toLocaleString()}.` : "";
    value.focus();
    announce("New secret shown. Copy it now: it is shown only once.");
  }));
  copyButton("#copy-secret", "#secret-value");
  await setUpEndpoints();

  const { tasks } = await api<TaskList>("/v1/tasks?limit=20");
  const lists = await Promise.all(tasks.map(async (task) => ({ task, list: await api<DeliveryList>(`${taskPath(task.task_id)}/webhooks`) })));
  const rows = lists
    .filter(({ list }) => list.webhook_url)
    .flatMap(({ task, list }) =>
      (list.deliveries.length ? list.deliveries.slice(-3) : [null]).map((delivery) =>
        el(
          "tr",
          {},
          el("td", {}, el("a", { href: `/console/tasks/${encodeURIComponent(task.task_id)}`, class: "mono" }, task.task_id)),
          el("td", { class: "mono" }, list.webhook_url),
          el("td", {}, delivery ? String(delivery.attempt) : "—"),
          el("td", {}, delivery ? formatTime(delivery.attempted_at) : "not yet"),
          el("td", { class: delivery && !delivery.success ? "error" : "" }, delivery ? (delivery.status_code === null ? delivery.error || "no answer" : String(delivery.status_code)) : ""),
        ),
      ),
    );
  $("#recent-deliveries tbody").replaceChildren(...rows);
  $("#deliveries-empty").hidden = rows.length > 0;
  $("#recent-deliveries").parentElement!.hidden = rows.length === 0;
}
