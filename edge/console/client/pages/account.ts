/** The account: password change (other sessions end) and deletion. */
import { ApiError, api, setCsrf } from "../api";
import { onSubmit } from "../actions";
import { $, flash } from "../dom";
import type { Session } from "../types";

/** A 401 here means the password typed was wrong, not that the session ended. */
function wrongPassword(message: string): (error: unknown) => never {
  return (error) => {
    throw error instanceof ApiError && error.status === 401 ? new Error(message) : error;
  };
}

export function accountPage(): void {
  onSubmit($<HTMLFormElement>("#password-form"), async () => {
    const json = { current_password: $<HTMLInputElement>("#current-password").value, new_password: $<HTMLInputElement>("#new-password").value };
    await api("/account/password", { method: "POST", json, expect401: true }).catch(wrongPassword("The current password is wrong."));
    setCsrf((await api<Session>("/session")).csrf_token);
    $<HTMLFormElement>("#password-form").reset();
    flash("Password changed. Your other sessions are signed out.", "info");
  });
  onSubmit($<HTMLFormElement>("#delete-form"), async () => {
    if (!confirm("Delete your account and everything in it?")) return;
    await api("/account", { method: "DELETE", json: { password: $<HTMLInputElement>("#delete-password").value }, expect401: true }).catch(wrongPassword("The password is wrong."));
    location.assign("/console/signup");
  });
}
