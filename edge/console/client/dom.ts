/**
 * Building and finding elements. Every string that came from a user or the API reaches the page
 * through textContent or attributes (el()), never innerHTML.
 */

type Attribute = string | number | boolean | null | undefined | ((event: Event) => unknown);
type Attributes = Record<string, Attribute>;
export type Child = Node | string | null | undefined | false;

/** An element with attributes (`on…` ones become listeners) and children; null, undefined and false are left out. */
export function el<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") node.addEventListener(name.slice(2), value);
    else if (name === "class") node.className = String(value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) node.append(child);
  return node;
}

const SVG = "http://www.w3.org/2000/svg";

export function svg(tag: string, attributes: Record<string, string | number> = {}, ...children: (Node | string)[]): SVGElement {
  const node = document.createElementNS(SVG, tag) as SVGElement;
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  node.append(...children);
  return node;
}

/** The page's element for `selector`; the server renders every one a page module asks for. */
export function $<T extends Element = HTMLElement>(selector: string): T {
  const node = document.querySelector<T>(selector);
  if (!node) throw new Error(`This page lacks ${selector}.`);
  return node;
}

export function flash(message: string, kind: "error" | "info" = "error"): void {
  const box = $("#flash");
  box.textContent = message;
  box.className = kind === "info" ? "flash info" : "flash";
  box.setAttribute("role", kind === "info" ? "status" : "alert");
  box.hidden = false;
}

export function clearFlash(): void {
  $("#flash").hidden = true;
}

export function announce(message: string): void {
  const region = $("#announcer");
  region.textContent = "";
  // A fresh text node after clearing makes screen readers read it even when it repeats.
  setTimeout(() => (region.textContent = message), 50);
}

export function formatTime(iso: string | null | undefined): HTMLTimeElement | string {
  if (!iso) return "—";
  const date = new Date(iso);
  return el("time", { datetime: iso, title: iso }, date.toLocaleString());
}

export function statusBadge(status: string): HTMLSpanElement {
  return el("span", { class: `status status-${status}` }, status);
}
