/** What every signed-in page has: sign-out, copy buttons, tables shown as cards on narrow screens. */
import { api } from "./api";
import { copyText, guarded } from "./actions";
import { $ } from "./dom";

export function signedInChrome(): void {
  $("#sign-out").addEventListener("click", guarded(async () => {
    await api("/auth/signout", { method: "POST" });
    location.assign("/console/signin?reason=signedout");
  }));
  for (const button of document.querySelectorAll<HTMLButtonElement>("button[data-copy]")) {
    button.addEventListener("click", () => copyText(document.getElementById(button.dataset.copy!)!.textContent!, button));
  }
  for (const table of document.querySelectorAll<HTMLTableElement>(".scroll > table")) labelCells(table);
}

/**
 * On a narrow screen each row is a card whose cells carry their column's name (CSS shows
 * `data-label`). Rows come and go as pages refresh them, so every row added is labelled from
 * the header; a cell that already has a label keeps it, and a column whose header is only for
 * screen readers (actions) gets none.
 */
function labelCells(table: HTMLTableElement): void {
  const names = [...table.querySelectorAll("thead th")].map((th) => (th.querySelector(".sr-only") ? "" : th.textContent!.trim()));
  const label = () => {
    for (const row of table.tBodies[0]?.rows ?? []) {
      [...row.cells].forEach((cell, index) => {
        if (!cell.hasAttribute("data-label")) cell.setAttribute("data-label", names[index] ?? "");
      });
    }
  };
  label();
  new MutationObserver(label).observe(table, { childList: true, subtree: true });
}
