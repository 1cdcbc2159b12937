import { $, announce, clearFlash, el, flash } from "./dom";

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The control a listener was attached to. */
export function control(event: Event): HTMLButtonElement {
  return event.currentTarget as HTMLButtonElement;
}

/** Runs a form's action with its submit button disabled, showing any error in the flash box. */
export function onSubmit(form: HTMLFormElement, action: (data: FormData) => Promise<unknown>): void {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearFlash();
    const button = form.querySelector<HTMLButtonElement>("button[type=submit]")!;
    button.disabled = true;
    try {
      await action(new FormData(form));
    } catch (error) {
      flash(messageOf(error));
    } finally {
      button.disabled = false;
    }
  });
}

/** A click listener that runs `action` with its button disabled, showing any error in the flash box. */
export function guarded(action: (event: Event) => Promise<unknown>): (event: Event) => Promise<void> {
  return async (event) => {
    const button = control(event);
    button.disabled = true;
    clearFlash();
    try {
      await action(event);
    } catch (error) {
      flash(messageOf(error));
    } finally {
      button.disabled = false;
    }
  };
}

/** Copies `text`; where the Clipboard API is refused, selects the input next to the button and copies that. */
export async function copy(text: string, button: HTMLElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const field = button.parentElement!.querySelector("input")!;
    field.select();
    document.execCommand("copy");
  }
  copied(button);
}

/** Copies any text, through a hidden textarea where the Clipboard API is refused. */
export async function copyText(text: string, button: HTMLElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const field = el("textarea", { class: "sr-only", readonly: true });
    field.value = text;
    button.after(field);
    field.select();
    document.execCommand("copy");
    field.remove();
  }
  copied(button);
}

function copied(button: HTMLElement): void {
  const label = button.textContent;
  button.textContent = "Copied";
  announce("Copied to the clipboard");
  setTimeout(() => (button.textContent = label), 2000);
}

/** Copies the value of the input `selector` when `button` is clicked. */
export function copyButton(button: string, selector: string): void {
  $(button).addEventListener("click", (event) => copy($<HTMLInputElement>(selector).value, control(event)));
}
