import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";
import type { Stack } from "../../scripts/lib/local-stack";
import { newSession } from "./browser";

/** What the console's first-run and phone tests share: a user signed up, verified and signed in through the pages. */

export const PASSWORD = "correct horse battery";
/** Two busy cores: wait generously for what the page shows. */
export const PATIENT = { timeout: 20_000 };

export function newEmail(prefix = "user"): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}@example.com`;
}

/** The newest link to `path` mailed to `email` by the stack's dev outbox. */
export async function outboxLink(stack: Stack, email: string, path: string): Promise<string> {
  let link: string | undefined;
  await expect.poll(async () => {
    const { messages } = (await (await stack.fetch(`/console/api/dev/outbox?to=${encodeURIComponent(email)}`)).json()) as { messages: { links: string[] }[] };
    link = messages.flatMap((message) => message.links).find((candidate) => candidate.includes(path));
    return link;
  }, PATIENT).toBeDefined();
  return link!;
}

export async function ready(page: Page): Promise<void> {
  await page.waitForSelector("body[data-ready=true]", PATIENT);
}

export async function signUp(stack: Stack, page: Page, email: string): Promise<void> {
  await page.goto(`${stack.edgeUrl}/console/signup`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("verification link");
}

export async function signIn(stack: Stack, page: Page, email: string): Promise<void> {
  await page.goto(`${stack.edgeUrl}/console/signin`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/console\/tasks$/);
  await ready(page);
}

/** A new browser profile of a new verified user, signed in and on the (empty) task list. */
export async function signedInUser(stack: Stack, browser: Browser, viewport?: { width: number; height: number }): Promise<{ page: Page; context: BrowserContext; email: string; verifyLink: string }> {
  const { page, context } = await newSession(browser, viewport);
  const email = newEmail();
  await signUp(stack, page, email);
  const verifyLink = await outboxLink(stack, email, "/console/verify");
  await page.goto(verifyLink);
  await page.waitForURL(/reason=verified/);
  await signIn(stack, page, email);
  return { page, context, email, verifyLink };
}

/** An API key of the signed-in user, made through the console's own API as the Keys page does. */
export async function consoleKey(page: Page, name = "tests"): Promise<string> {
  return page.evaluate(async (keyName) => {
    const { csrf_token } = (await (await fetch("/console/api/session")).json()) as { csrf_token: string };
    const response = await fetch("/console/api/keys", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": csrf_token }, body: JSON.stringify({ name: keyName }) });
    return ((await response.json()) as { key: string }).key;
  }, name);
}

/** How far the page reaches past the viewport's right edge, in CSS pixels (0 when nothing scrolls sideways). */
export async function sidewaysOverflow(page: Page): Promise<number> {
  return page.evaluate<number>("document.documentElement.scrollWidth - window.innerWidth");
}
