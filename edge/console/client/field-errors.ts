/** A refusal shown next to the form field it is about (`#<id>-error`), the field marked invalid and focused. */
import { $ } from "./dom";

export function showFieldError(id: string, message: string): void {
  const field = $<HTMLInputElement>(`#${id}`);
  const box = $(`#${id}-error`);
  box.textContent = message;
  box.hidden = false;
  field.setAttribute("aria-invalid", "true");
  field.focus();
}

/** Clears every field error inside `container`. */
export function clearFieldErrors(container: HTMLElement): void {
  for (const box of container.querySelectorAll<HTMLElement>(".field-error")) {
    box.textContent = "";
    box.hidden = true;
  }
  for (const field of container.querySelectorAll("[aria-invalid]")) field.removeAttribute("aria-invalid");
}
