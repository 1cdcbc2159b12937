import { mkdir, readFile, stat } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { Stack, authed, uploadLocalFile } from "../../scripts/lib/local-stack";
import { launchChromium, newSession } from "./browser";
import { WebhookReceiver } from "./webhook-receiver";
import { submitTask, waitForEnd } from "./helpers";

const SCREENSHOTS = "docs/screenshots";
const PASSWORD = "correct horse battery";
/** Two busy cores: wait generously for what the page shows. */
const PATIENT = { timeout: 20_000 };

let stack: Stack;
let browser: Browser;
let clipPath: string;

beforeAll(async () => {
  [stack, browser] = await Promise.all([Stack.start(), launchChromium()]);
  clipPath = await makeClip(await mediaDir(), "console-clip.mp4", { seconds: 12, size: "640x360" });
  await mkdir(SCREENSHOTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

function newEmail(): string {
  return `dev-${Math.random().toString(36).slice(2, 10)}@example.com`;
}

async function outboxLink(email: string, path: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const { messages } = (await (await stack.fetch(`/console/api/dev/outbox?to=${encodeURIComponent(email)}`)).json()) as { messages: { links: string[] }[] };
    const link = messages.flatMap((message) => message.links).find((candidate) => candidate.includes(path));
    if (link) return link;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no mail with ${path} for ${email}`);
}

/** Fills in the sign-up form of the stack at `edgeUrl` and waits until it says a link was mailed. */
async function signUp(page: Page, email: string, edgeUrl = stack.edgeUrl): Promise<void> {
  await page.goto(`${edgeUrl}/console/signup`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("verification link");
}

async function signUpAndVerify(page: Page, email: string): Promise<void> {
  await signUp(page, email);
  await page.goto(await outboxLink(email, "/console/verify"));
  await page.waitForURL(/\/console\/signin\?reason=verified/);
}

async function signIn(page: Page, email: string, password = PASSWORD): Promise<void> {
  await page.goto(`${stack.edgeUrl}/console/signin`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** A new browser session of a new, verified user, signed in and on the task list. */
async function signedInUser(): Promise<{ page: Page; context: BrowserContext; email: string }> {
  const { page, context } = await newSession(browser);
  const email = newEmail();
  await signUpAndVerify(page, email);
  await signIn(page, email);
  await page.waitForURL(/\/console\/tasks$/);
  return { page, context, email };
}

async function ready(page: Page): Promise<void> {
  await page.waitForSelector("body[data-ready=true]");
}

/** Opens a console page of the shared stack and waits until its script has filled it. */
async function visit(page: Page, path: string): Promise<void> {
  await page.goto(`${stack.edgeUrl}${path}`);
  await ready(page);
}

/** A <progress> element's value (the script sets it; the attribute reflects it). */
async function progressOf(page: Page, selector: string): Promise<number> {
  return Number(await page.locator(selector).getAttribute("value"));
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${SCREENSHOTS}/${name}.png`, fullPage: true });
}

describe("a developer's first session in the console", () => {
  it("signs up, verifies, makes a key, runs a task with it, watches it finish live, downloads the output, and revokes the key", async () => {
    const { page, context, requests } = await newSession(browser);
    const email = newEmail();
    await signUpAndVerify(page, email);
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("verified");
    await shoot(page, "sign-in");
    await signIn(page, email);
    await page.waitForURL(/\/console\/tasks$/);
    await ready(page);
    expect(await page.locator("#who").textContent()).toBe(email);

    await visit(page, "/console/keys");
    await page.getByLabel("Name").fill("laptop");
    await page.getByRole("button", { name: "Create key" }).click();
    const keyField = page.getByLabel("New API key");
    await expect.poll(() => keyField.inputValue(), PATIENT).toMatch(/^ffe_/);
    const key = await keyField.inputValue();
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: stack.edgeUrl });
    await page.getByRole("button", { name: "Copy", exact: true }).click();
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(key);
    await expect.poll(() => page.locator("#key-table tbody tr").count(), PATIENT).toBe(1);
    expect(await page.locator("#key-table tbody").textContent()).toContain("laptop");
    await shoot(page, "api-keys");

    const upload = await uploadLocalFile(stack, key, clipPath);
    const submitted = await submitTask(stack, key, { command: `ffmpeg -i ${upload.url} -vf scale=480:-2 -c:v libx264 -preset veryslow -crf 30 small.mp4`, with_metadata: true });
    expect(submitted.status).toBe(201);
    const { task_id } = (await submitted.json()) as { task_id: string };

    const listPage = await context.newPage();
    await listPage.goto(`${stack.edgeUrl}/console/tasks`);
    await ready(listPage);
    expect(["pending", "running"]).toContain(await listPage.locator(`#row-${task_id} .status-cell`).textContent());
    await visit(page, `/console/tasks/${task_id}`);
    const statusAtLoad = await page.locator("#task-status").textContent();
    expect(["pending", "running"]).toContain(statusAtLoad);
    await page.evaluate(`
      window.etasShown = [];
      const eta = document.getElementById("task-eta");
      new MutationObserver(() => window.etasShown.push(eta.textContent)).observe(eta, { childList: true, characterData: true, subtree: true });
    `);
    await expect.poll(() => progressOf(page, "#task-progress"), { timeout: 90_000 }).toBeGreaterThan(0);
    await expect.poll(() => page.locator("#task-status").textContent(), { timeout: 90_000 }).toBe("completed");
    expect(await progressOf(page, "#task-progress")).toBe(100);
    await expect.poll(() => page.locator("#announcer").textContent(), PATIENT).toBe("Task completed");
    expect(await page.evaluate<string[]>("window.etasShown")).toContainEqual(expect.stringMatching(/^· about \d+ (s|min \d+ s) left$/));
    await expect.poll(() => page.locator("#task-log").textContent(), PATIENT).toMatch(/ffmpeg|frame=/);
    await shoot(page, "task");

    const link = page.getByRole("link", { name: "small.mp4" });
    const [download] = await Promise.all([page.waitForEvent("download"), link.click()]);
    const downloaded = await download.path();
    const { task } = await waitForEnd(stack, key, task_id);
    expect((await stat(downloaded)).size).toBe(task.outputs![0]!.size);
    expect((await readFile(downloaded)).subarray(4, 8).toString()).toBe("ftyp");

    // The list page, open all along, followed the same task through its event stream.
    await expect.poll(() => listPage.locator(`#row-${task_id} .status-cell`).textContent(), PATIENT).toBe("completed");
    await shoot(listPage, "tasks");

    await visit(page, "/console/usage");
    expect(await page.locator("#tasks-chart figcaption").textContent()).toBe("1 in total over 30 days.");
    await shoot(page, "usage");

    await visit(page, "/console/keys");
    await page.getByRole("button", { name: "Revoke laptop" }).click();
    await expect.poll(() => page.locator("#key-table tbody").textContent(), PATIENT).toContain("revoked");
    expect((await stack.fetch("/v1/me", authed(key))).status).toBe(401);

    expect(requests.filter((url) => !url.startsWith(stack.edgeUrl))).toEqual([]);
    await context.close();
  }, 240_000);

  it("marks the refused token as the command is typed, and runs an accepted command onto the task page", async () => {
    const cli = await stack.createUser();
    const upload = await uploadLocalFile(stack, cli.key, clipPath);
    const { page, context } = await signedInUser();

    await visit(page, "/console/new");
    const command = page.getByLabel("ffmpeg command");
    await command.fill("ffmpeg -i /etc/passwd out.mp4");
    await expect.poll(() => page.locator("#verdict").textContent(), PATIENT).toContain("Refused");
    expect(await page.locator("#command-marked mark").textContent()).toBe("/etc/passwd");
    expect(await command.getAttribute("aria-invalid")).toBe("true");
    await shoot(page, "composer");

    await command.fill(`-i ${upload.url} -t 1 -c:v libx264 -preset ultrafast first.mp4`);
    await expect.poll(() => page.locator("#verdict").textContent(), PATIENT).toContain("Accepted");
    expect(await command.getAttribute("aria-invalid")).toBe("false");
    await page.getByRole("button", { name: "Run" }).click();
    await page.waitForURL(/\/console\/tasks\/tsk_/);
    await ready(page);
    expect(await page.locator("#task-command").textContent()).toBe(`-i ${upload.url} -t 1 -c:v libx264 -preset ultrafast first.mp4`);
    await expect.poll(() => page.locator("#task-status").textContent(), { timeout: 90_000 }).toBe("completed");
    expect(await page.getByRole("link", { name: "first.mp4" }).isVisible()).toBe(true);
    await context.close();
  }, 240_000);

  it("uploads a file with a progress bar, lists it with its expiry, offers it as a composer input, and deletes it", async () => {
    const { page, context } = await signedInUser();

    await visit(page, "/console/files");
    expect(await page.locator("#file-empty").isVisible()).toBe(true);
    await page.getByLabel("Upload a file (kept for a day)").setInputFiles(clipPath);
    await page.getByRole("button", { name: "Upload", exact: true }).click();
    await expect.poll(() => page.locator("#upload-status").textContent(), { timeout: 60_000 }).toContain("uploaded");
    expect(await progressOf(page, "#upload-progress")).toBe(100);
    await page.reload();
    await ready(page);
    expect(await page.locator("#file-table tbody tr").count()).toBe(1);
    expect(await page.getByRole("link", { name: "console-clip.mp4" }).isVisible()).toBe(true);
    expect(await page.locator("#file-table .countdown").textContent()).toMatch(/^(24 h|23 h \d+ min)$/);
    await shoot(page, "files");
    const fileUrl = (await page.getByRole("link", { name: "console-clip.mp4" }).getAttribute("href"))!;
    expect((await stack.fetch(new URL(fileUrl).pathname)).status).toBe(200);

    await visit(page, "/console/new");
    await page.getByLabel("File", { exact: true }).selectOption({ index: 1 });
    await page.getByRole("button", { name: "Add as input" }).click();
    await page.getByLabel("ffmpeg command").pressSequentially("-t 1 -c:v libx264 -preset ultrafast picked.mp4");
    expect(await page.getByLabel("ffmpeg command").inputValue()).toBe(`-i ${fileUrl} -t 1 -c:v libx264 -preset ultrafast picked.mp4`);
    await expect.poll(() => page.locator("#verdict").textContent(), PATIENT).toContain("Accepted");

    await visit(page, "/console/files");
    await page.getByRole("button", { name: "Delete console-clip.mp4" }).click();
    await expect.poll(() => page.locator("#file-empty").isVisible(), PATIENT).toBe(true);
    expect((await stack.fetch(new URL(fileUrl).pathname)).status).toBe(404);
    await context.close();
  }, 240_000);

  it("shows a task's webhook deliveries and redelivers, cancels a running task, and deletes a finished one", async () => {
    const receiver = await new WebhookReceiver().listen();
    const cli = await stack.createUser();
    const upload = await uploadLocalFile(stack, cli.key, clipPath);
    const { page, context } = await signedInUser();
    try {
      await visit(page, "/console/new");
      await page.getByLabel("ffmpeg command").fill(`-i ${upload.url} -t 1 -c:v libx264 -preset ultrafast hooked.mp4`);
      await page.getByLabel("Webhook URL (optional)").fill(receiver.url("/hook"));
      await page.getByRole("button", { name: "Run" }).click();
      await page.waitForURL(/\/console\/tasks\/tsk_/);
      const hookedUrl = page.url();
      await expect.poll(() => page.locator("#task-status").textContent(), { timeout: 90_000 }).toBe("completed");
      await expect.poll(() => page.locator("#delivery-table tbody tr").count(), { timeout: 60_000 }).toBe(1);
      expect(await page.locator("#webhook-url").textContent()).toBe(`Webhook: ${receiver.url("/hook")}`);
      expect(await page.locator("#delivery-table tbody").textContent()).toContain("200");
      await page.getByRole("button", { name: "Redeliver" }).click();
      await expect.poll(() => page.locator("#delivery-table tbody tr").count(), { timeout: 60_000 }).toBe(2);
      expect(await page.locator("#delivery-table tbody").textContent()).toContain("(redelivery)");
      expect(receiver.received("/hook")).toHaveLength(2);

      await visit(page, "/console/webhooks");
      expect(await page.locator("#recent-deliveries tbody").textContent()).toContain(receiver.url("/hook"));

      await visit(page, "/console/new");
      await page.getByLabel("ffmpeg command").fill(`-i ${upload.url} -c:v libx264 -preset veryslow -crf 30 long.mp4`);
      await page.getByRole("button", { name: "Run" }).click();
      await page.waitForURL(/\/console\/tasks\/tsk_/);
      await ready(page);
      await page.getByRole("button", { name: "Cancel" }).click();
      await expect.poll(() => page.locator("#task-status").textContent(), { timeout: 60_000 }).toBe("canceled");
      await expect.poll(() => page.locator("#task-error").textContent(), PATIENT).toMatch(/^CANCELED: /);
      expect(await page.getByRole("button", { name: "Cancel" }).isVisible()).toBe(false);

      await page.goto(hookedUrl);
      await ready(page);
      await page.getByRole("button", { name: "Delete" }).click();
      await page.waitForURL(/\/console\/tasks$/);
      const hookedId = new URL(hookedUrl).pathname.split("/").pop()!;
      expect(await page.evaluate(async (id) => (await fetch(`/console/api/v1/tasks/${id}`)).status, hookedId)).toBe(404);
    } finally {
      await receiver.close();
      await context.close();
    }
  }, 300_000);

  it("shows usage as a chart, the webhook secret on request, and the account page", async () => {
    const { page, context } = await signedInUser();

    await visit(page, "/console/usage");
    expect(await page.locator("#tasks-chart svg rect.bar").count()).toBe(30);
    expect(await page.locator("#usage-facts").textContent()).toContain("Running tasks0 of 5");
    expect(await page.locator("#tasks-chart figcaption").textContent()).toBe("0 in total over 30 days.");

    await visit(page, "/console/webhooks");
    await page.getByRole("button", { name: "Reveal a new secret" }).click();
    await expect.poll(() => page.getByRole("textbox", { name: "Signing secret" }).inputValue(), PATIENT).toMatch(/^whsec_/);
    await shoot(page, "webhooks");

    await visit(page, "/console/account");
    await shoot(page, "account");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/reason=signedout/);
    await page.goto(`${stack.edgeUrl}/console/tasks`);
    await page.waitForURL(/\/console\/signin\?/);
    await context.close();
  }, 120_000);

  it("changes the password, resets a forgotten one from the mailed link, and deletes the account", async () => {
    const { page, context, email } = await signedInUser();

    await visit(page, "/console/account");
    await page.getByLabel("Current password").fill(PASSWORD);
    await page.getByLabel("New password").fill("a changed password");
    await page.getByRole("button", { name: "Change password" }).click();
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("Password changed");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/reason=signedout/);
    await signIn(page, email, "a changed password");
    await page.waitForURL(/\/console\/tasks$/);
    await visit(page, "/console/account");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/reason=signedout/);

    await page.goto(`${stack.edgeUrl}/console/forgot`);
    await page.getByLabel("Email").fill(email);
    await page.getByRole("button", { name: "Send a reset link" }).click();
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("reset link");
    await page.goto(await outboxLink(email, "/console/reset"));
    await page.getByLabel("New password").fill("a reset password");
    await page.getByRole("button", { name: "Set password" }).click();
    await page.waitForURL(/reason=reset/);
    await signIn(page, email, "a reset password");
    await page.waitForURL(/\/console\/tasks$/);

    await visit(page, "/console/account");
    await page.getByLabel("Password", { exact: true }).fill("a reset password");
    await page.getByRole("button", { name: "Delete my account" }).click();
    await page.waitForURL(/\/console\/signup$/);
    await signIn(page, email, "a reset password");
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toBe("Wrong email or password.");
    await context.close();
  }, 180_000);

  it("filters the task list by status and pages through it", async () => {
    const { page, context } = await signedInUser();
    await ready(page);
    // Three tasks whose input the CDN answers 404 (no such upload): they fail at once, since a
    // 404 is final where a refused connection is tried again.
    const ids = await page.evaluate(async (origin) => {
      const { csrf_token } = (await (await fetch("/console/api/session")).json()) as { csrf_token: string };
      const created: string[] = [];
      for (const name of ["a", "b", "c"]) {
        const response = await fetch("/console/api/v1/tasks", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": csrf_token }, body: JSON.stringify({ command: `-i ${origin}/uploads/missing/none.mp4 ${name}.mp4` }) });
        created.push(((await response.json()) as { task_id: string }).task_id);
      }
      return created;
    }, stack.edgeUrl);
    expect(ids).toHaveLength(3);

    await visit(page, "/console/tasks?limit=2");
    expect(await page.locator("#task-table tbody tr").count()).toBe(2);
    expect(await page.locator("#page-info").textContent()).toBe("1–2 of 3");
    expect(await page.getByRole("button", { name: "Previous" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Next" }).click();
    await page.waitForURL(/offset=2/);
    await ready(page);
    expect(await page.locator("#page-info").textContent()).toBe("3–3 of 3");
    expect(await page.locator("#task-table tbody").textContent()).toContain(ids[0]!);

    await expect.poll(async () => {
      await visit(page, "/console/tasks?status=failed");
      return page.locator("#task-table tbody tr").count();
    }, { timeout: 60_000, interval: 1000 }).toBe(3);
    await page.getByLabel("Status").selectOption("completed");
    await page.waitForURL(/status=completed/);
    await ready(page);
    expect(await page.locator("#task-empty").isVisible()).toBe(true);
    await context.close();
  }, 180_000);

  it("can be used from the keyboard alone", async () => {
    const { page, context } = await newSession(browser);
    const email = newEmail();
    await signUpAndVerify(page, email);
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.textContent")).toBe("Skip to content");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement.id")).toBe("email");
    await page.keyboard.type(email);
    await page.keyboard.press("Tab");
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press("Enter");
    await page.waitForURL(/\/console\/tasks$/);
    await ready(page);
    expect(await page.getByRole("navigation", { name: "Console" }).isVisible()).toBe(true);
    expect(await page.getByRole("main").isVisible()).toBe(true);
    expect(await page.getByRole("link", { name: "Tasks" }).getAttribute("aria-current")).toBe("page");
    await context.close();
  }, 120_000);

  it("works at phone width", async () => {
    const { page, context } = await newSession(browser, { width: 390, height: 844 });
    const email = newEmail();
    await signUpAndVerify(page, email);
    await signIn(page, email);
    await page.waitForURL(/\/console\/tasks$/);
    await ready(page);
    const overflow = await page.evaluate<number>("document.documentElement.scrollWidth - document.documentElement.clientWidth");
    expect(overflow).toBeLessThanOrEqual(0);
    await shoot(page, "getting-started-phone");
    await context.close();
  }, 120_000);
});

describe("what the console refuses", () => {
  it("says the email or password is wrong without signing in", async () => {
    const { page, context } = await newSession(browser);
    const email = newEmail();
    await signUpAndVerify(page, email);
    await signIn(page, email, "not the password at all");
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toBe("Wrong email or password.");
    expect(new URL(page.url()).pathname).toBe("/console/signin");
    expect((await context.cookies()).filter((cookie) => cookie.name.endsWith("ffedge_session"))).toEqual([]);
    await context.close();
  }, 120_000);

  it("says a sign-up or reset mail could not be sent, keeps what was typed, and sends it again from Try again", async () => {
    const { page, context } = await newSession(browser);
    // The local outbox never fails: each form's first request gets the answer production gives
    // when Email Service refuses the mail (test/edge/accounts/mail.test.ts); later ones go through.
    for (const path of ["signup", "forgot"]) {
      let refused = false;
      await page.route(`**/console/api/auth/${path}`, async (route) => {
        if (refused) return route.continue();
        refused = true;
        const problem = { type: "about:blank", title: "MAIL_NOT_SENT", status: 503, code: "MAIL_NOT_SENT", detail: "The mail could not be sent; try again in 2 s.", retry_after: 2 };
        await route.fulfill({ status: 503, headers: { "content-type": "application/problem+json", "retry-after": "2" }, body: JSON.stringify(problem) });
      });
    }
    const email = newEmail();
    await page.goto(`${stack.edgeUrl}/console/signup`);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Create account" }).click();
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("We could not send the mail. Try again in 2 seconds.");
    expect(await page.getByLabel("Email").inputValue()).toBe(email);
    const retry = page.getByRole("button", { name: "Try again" });
    expect(await retry.isDisabled()).toBe(true);
    await retry.click();
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("verification link");
    await outboxLink(email, "/console/verify");

    await page.goto(`${stack.edgeUrl}/console/forgot`);
    await page.getByLabel("Email").fill(email);
    await page.getByRole("button", { name: "Send a reset link" }).click();
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("We could not send the mail.");
    await page.getByRole("button", { name: "Try again" }).click();
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("a reset link is on its way");
    await context.close();
  }, 120_000);

  it("explains a bad verification link, a bad reset link and a sign-in before verifying", async () => {
    const { page, context } = await newSession(browser);
    await page.goto(`${stack.edgeUrl}/console/verify?token=not-a-token`);
    await expect.poll(() => page.locator("#verify-status").textContent(), PATIENT).toContain("Sign up again to get a new link.");

    await page.goto(`${stack.edgeUrl}/console/reset?token=not-a-token`);
    await expect.poll(() => page.locator("#reset-dead").isVisible(), PATIENT).toBe(true);
    expect(await page.getByLabel("New password").isVisible()).toBe(false);

    const email = newEmail();
    await signUp(page, email);
    await signIn(page, email);
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("verification mail");
    expect(new URL(page.url()).pathname).toBe("/console/signin");
    await context.close();
  }, 120_000);

  it("sends a browser whose session was signed out elsewhere back to sign-in, then returns it to the page it wanted", async () => {
    const { page, context, email } = await signedInUser();
    const ended = (await context.cookies()).find((cookie) => cookie.name.endsWith("ffedge_session"))!;
    await visit(page, "/console/account");
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/reason=signedout/);

    await context.addCookies([ended]);
    await page.goto(`${stack.edgeUrl}/console/usage`);
    await page.waitForURL(/\/console\/signin\?.*reason=expired/);
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("session has ended");
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/console\/usage$/);
    await context.close();
  }, 120_000);

  it("refuses a state change without the CSRF token, even with a valid session cookie", async () => {
    const { page, context } = await signedInUser();
    const answer = await page.evaluate(async () => {
      const response = await fetch("/console/api/keys", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "sneaky" }) });
      return { status: response.status, body: await response.json() };
    });
    expect(answer).toMatchObject({ status: 403, body: { code: "CSRF_FAILED" } });
    const keys = await page.evaluate(async () => ((await (await fetch("/console/api/keys")).json()) as { keys: unknown[] }).keys);
    expect(keys).toEqual([]);
    await context.close();
  }, 120_000);

  it("answers another user's task URL with not found", async () => {
    const other = await stack.createUser();
    const upload = await uploadLocalFile(stack, other.key, clipPath);
    const { task_id } = (await (await submitTask(stack, other.key, { command: `ffmpeg -i ${upload.url} -t 1 -c:v libx264 -preset ultrafast theirs.mp4` })).json()) as { task_id: string };

    const { page, context } = await signedInUser();
    const [apiAnswer] = await Promise.all([
      page.waitForResponse((response) => response.url().endsWith(`/console/api/v1/tasks/${task_id}`)),
      page.goto(`${stack.edgeUrl}/console/tasks/${task_id}`),
    ]);
    expect(apiAnswer.status()).toBe(404);
    await ready(page);
    expect(await page.locator("#task-missing").isVisible()).toBe(true);
    expect(await page.locator("#task-body").isVisible()).toBe(false);
    await context.close();
  }, 120_000);

  it("shows user-supplied strings as text, never as markup", async () => {
    const { page, context } = await signedInUser();
    let dialogs = 0;
    page.on("dialog", () => dialogs++);
    await visit(page, "/console/keys");
    const hostile = `<img src=x onerror="alert(1)">`;
    await page.getByLabel("Name").fill(hostile);
    await page.getByRole("button", { name: "Create key" }).click();
    await expect.poll(() => page.locator("#key-table tbody td").first().textContent(), PATIENT).toBe(hostile);
    expect(await page.locator("#key-table img").count()).toBe(0);
    expect(dialogs).toBe(0);
    await context.close();
  }, 120_000);
});

describe("an expired session", () => {
  let shortStack: Stack;
  beforeAll(async () => {
    shortStack = await Stack.start({ edgeVars: { SESSION_TTL_SECONDS: "3" } });
  }, 120_000);
  afterAll(() => shortStack?.stop());

  it("is refused by the server even if the browser still sends its cookie, and the console asks to sign in again", async () => {
    const { page, context } = await newSession(browser);
    const email = newEmail();
    await signUp(page, email, shortStack.edgeUrl);
    const { messages } = (await (await shortStack.fetch(`/console/api/dev/outbox?to=${encodeURIComponent(email)}`)).json()) as { messages: { links: string[] }[] };
    await page.goto(messages[0]!.links.find((link) => link.includes("/console/verify"))!);
    await page.waitForURL(/reason=verified/);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/console\/tasks$/);
    const cookie = (await context.cookies()).find((candidate) => candidate.name.endsWith("ffedge_session"))!;

    const sessionStatus = async () => (await shortStack.fetch("/console/api/session", { headers: { cookie: `${cookie.name}=${cookie.value}` } })).status;
    await expect.poll(sessionStatus, { timeout: 30_000, interval: 500 }).toBe(401);
    // The browser would drop the cookie at its Max-Age; put it back to see the server refuse it.
    await context.addCookies([{ ...cookie, expires: Math.floor(Date.now() / 1000) + 3600 }]);
    await page.goto(`${shortStack.edgeUrl}/console/keys`);
    await page.waitForURL(/\/console\/signin\?.*reason=expired/);
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("session has ended");
    await context.close();
  }, 120_000);
});

describe("console pages", () => {
  it("carry a strict Content-Security-Policy and cannot be framed", async () => {
    for (const path of ["/console/signin", "/console/tasks", "/console/tasks/tsk_x", "/console/new", "/console/files", "/console/keys", "/console/usage", "/console/webhooks", "/console/account"]) {
      // Any session cookie: without one, the signed-in pages send the browser to sign-in.
      const response = await stack.fetch(path, { headers: { cookie: "ffedge_session=any" } });
      expect(response.status, path).toBe(200);
      const policy = response.headers.get("content-security-policy")!;
      expect(policy).toContain("script-src 'self'");
      expect(policy).toContain("frame-ancestors 'none'");
      expect(policy).toContain("default-src 'none'");
      expect(policy).not.toContain("unsafe-inline");
      expect(await response.text()).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|\son\w+=/i);
    }
  });

  it("start at the task list", async () => {
    const response = await stack.fetch("/console", { redirect: "manual" });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/console/tasks");
  });

  it("load under 100 KB of compressed JavaScript, cached for a year under a content-hashed URL", async () => {
    const html = await (await stack.fetch("/console/tasks")).text();
    const scripts = [...html.matchAll(/<script[^>]*src="([^"]+)"/g)].map((match) => match[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    let compressed = 0;
    for (const src of scripts) {
      expect(src).toMatch(/\.[0-9a-f]{12}\.js$/);
      const response = await stack.fetch(src);
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      compressed += gzipSync(Buffer.from(await response.arrayBuffer())).length;
    }
    console.log(`console JavaScript, gzip: ${compressed} bytes`);
    expect(compressed).toBeLessThan(100 * 1024);
    expect((await stack.fetch("/console/assets/console.000000000000.js")).status).toBe(404);
  });
});
