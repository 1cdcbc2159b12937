/** The signed-out pages: sign-in, sign-up, address verification, forgotten and reset password. */
import { ApiError, api, isStatus, problemCode } from "../api";
import { onSubmit } from "../actions";
import { $, el, flash } from "../dom";
import type { Message } from "../types";

export function signinPage(): void {
  const params = new URLSearchParams(location.search);
  if (params.get("reason") === "expired") flash("Your session has ended. Sign in again.");
  if (params.get("reason") === "signedout") flash("You are signed out.", "info");
  if (params.get("reason") === "reset") flash("Your password is set. Sign in with it.", "info");
  if (params.get("reason") === "verified") flash("Your address is verified. Sign in.", "info");
  onSubmit($<HTMLFormElement>("#signin-form"), async (form) => {
    try {
      await api("/auth/signin", { method: "POST", json: { email: form.get("email"), password: form.get("password") }, expect401: true });
    } catch (error) {
      if (isStatus(error, 401)) throw new Error("Wrong email or password.");
      throw error;
    }
    const next = params.get("next");
    location.assign(next && next.startsWith("/console/") && !next.startsWith("//") ? next : "/console/tasks");
  });
}

/**
 * Sign-up and forgot-password answer only once their mail is sent. When it could not be (503
 * MAIL_NOT_SENT) or too many were asked for (429 TOO_MANY_ATTEMPTS), the form keeps what was
 * typed and the message carries a button that sends it again once the wait the service asked
 * for (retry_after) is over.
 */
async function mailRequest(formElement: HTMLFormElement, path: string, json: unknown): Promise<Message | null> {
  try {
    return await api<Message>(path, { method: "POST", json });
  } catch (error) {
    const code = problemCode(error);
    if (!(error instanceof ApiError) || (code !== "MAIL_NOT_SENT" && code !== "TOO_MANY_ATTEMPTS")) throw error;
    const wait = Math.max(1, Number(error.problem.retry_after) || 60);
    const when = wait >= 90 * 60 ? "in about an hour" : wait >= 90 ? `in ${Math.ceil(wait / 60)} minutes` : `in ${wait} seconds`;
    const why = code === "MAIL_NOT_SENT" ? "We could not send the mail." : "Too many mails were asked for this address or from your network.";
    flash(`${why} Try again ${when}. `);
    const retry = el("button", { type: "button", class: "secondary", id: "mail-retry", disabled: true, onclick: () => formElement.requestSubmit() }, "Try again");
    $("#flash").append(retry);
    setTimeout(() => {
      retry.disabled = false;
    }, wait * 1000);
    return null;
  }
}

export function signupPage(): void {
  const formElement = $<HTMLFormElement>("#signup-form");
  onSubmit(formElement, async (form) => {
    const answer = await mailRequest(formElement, "/auth/signup", { email: form.get("email"), password: form.get("password") });
    if (!answer) return;
    formElement.reset();
    flash(`${answer.message} Follow the link in the mail to finish.`, "info");
  });
}

export async function verifyPage(): Promise<void> {
  const token = new URLSearchParams(location.search).get("token");
  const status = $("#verify-status");
  if (!token) {
    status.textContent = "This link has no token. Open the link from the mail again.";
    return;
  }
  try {
    const answer = await api<{ already_verified: boolean }>("/auth/verify", { method: "POST", json: { token } });
    if (!answer.already_verified) return location.replace("/console/signin?reason=verified");
    status.textContent = "This address is already verified: sign in with the password you chose.";
  } catch (error) {
    if (problemCode(error) !== "INVALID_TOKEN") throw error;
    status.textContent = `This link does not work: it has expired (links last 24 hours) or is not one we sent. Sign up again to get a new link. If this address already signed up, set its password through "Forgot password".`;
  }
}

export function forgotPage(): void {
  const formElement = $<HTMLFormElement>("#forgot-form");
  onSubmit(formElement, async (form) => {
    const answer = await mailRequest(formElement, "/auth/forgot", { email: form.get("email") });
    if (answer) flash(answer.message, "info");
  });
}

export async function resetPage(): Promise<void> {
  const token = new URLSearchParams(location.search).get("token") || "";
  await checkResetLink(token);
  onSubmit($<HTMLFormElement>("#reset-form"), async (form) => {
    await api("/auth/reset", { method: "POST", json: { token, password: form.get("password") } });
    location.assign("/console/signin?reason=reset");
  });
}

/** A reset link that can no longer work is said at once, before a password is typed, with a way to ask again. */
async function checkResetLink(token: string): Promise<void> {
  try {
    await api("/auth/reset/check", { method: "POST", json: { token } });
  } catch (error) {
    const code = problemCode(error);
    if (code !== "INVALID_TOKEN" && code !== "VALIDATION_FAILED") throw error;
    $("#reset-form").parentElement!.hidden = true;
    $("#reset-dead").hidden = false;
  }
}
