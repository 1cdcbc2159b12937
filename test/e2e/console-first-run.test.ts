import { execFile } from "node:child_process";
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Browser, Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { Stack } from "../../scripts/lib/local-stack";
import { launchChromium, newSession } from "./browser";
import { PATIENT, consoleKey, newEmail, outboxLink, ready, signUp, signedInUser } from "./console-session";

const run = promisify(execFile);
const SCREENSHOTS = "docs/screenshots";
const SIGNED_IN_PAGES = ["/console/tasks", "/console/new", "/console/files", "/console/keys", "/console/usage", "/console/webhooks", "/console/account"];

let stack: Stack;
let browser: Browser;
let clipPath: string;

beforeAll(async () => {
  [stack, browser] = await Promise.all([Stack.start(), launchChromium()]);
  clipPath = await makeClip(await mediaDir(), "first-run.mp4", { seconds: 2, size: "320x240" });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

describe("a new user's first visit", () => {
  it("lands on sign-in without being told a session ended, which it is told only when its cookie outlived its session", async () => {
    const { page, context } = await newSession(browser);
    await page.goto(`${stack.edgeUrl}/console`);
    await page.waitForURL(/\/console\/signin\?next=%2Fconsole%2Ftasks$/);
    await page.waitForLoadState("networkidle");
    expect(await page.locator("#flash").isHidden()).toBe(true);

    await context.addCookies([{ name: "ffedge_session", value: "a-session-that-ended", url: `${stack.edgeUrl}/console` }]);
    await page.goto(`${stack.edgeUrl}/console/usage`);
    await page.waitForURL(/\/console\/signin\?.*reason=expired/);
    await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toBe("Your session has ended. Sign in again.");
    await context.close();
  }, 60_000);

  it("gets a getting-started on the empty task list: the API URL, a key link, and snippets that run as pasted", async () => {
    const { page, context } = await signedInUser(stack, browser);
    const start = page.locator("#getting-started");
    expect(await start.isVisible()).toBe(true);
    expect(await page.locator("#task-empty").isVisible()).toBe(false);
    expect(await page.locator("#api-url").textContent()).toBe(stack.edgeUrl);
    expect(await start.getByRole("link", { name: "Make an API key" }).getAttribute("href")).toBe("/console/keys");
    const snippet = (id: string) => page.locator(`#snippet-${id}`).textContent() as Promise<string>;
    expect(await snippet("cli")).toContain(`FFEDGE_URL=${stack.edgeUrl} ffedge login`);
    expect(await snippet("cli")).toContain(`ffedge run "ffmpeg -i ./in.mp4`);
    expect(await snippet("sdk")).toContain(`new FFedge({ apiKey: process.env.FFEDGE_API_KEY, baseUrl: "${stack.edgeUrl}" })`);
    expect(await snippet("sdk")).toContain("ff.run(");
    expect(await snippet("mcp")).toBe(`claude mcp add --transport http ffedge ${stack.edgeUrl}/mcp --header "Authorization: Bearer $FFEDGE_API_KEY"`);
    await page.screenshot({ path: `${SCREENSHOTS}/getting-started.png`, fullPage: true });

    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: stack.edgeUrl });
    await page.getByRole("button", { name: "Copy the curl snippet" }).click();
    const curl = await page.evaluate<string>("navigator.clipboard.readText()");
    expect(curl).toBe(await snippet("curl"));
    expect(curl).toContain(`export FFEDGE_URL=${stack.edgeUrl}`);

    // The key is a placeholder on the page (a key is shown in full only once); put a real one in and run the snippet as a user would.
    const key = await consoleKey(page);
    expect(await page.content()).not.toContain(key);
    const workdir = await mkdtemp(join(tmpdir(), "ffedge-snippet-"));
    try {
      await run("cp", [clipPath, join(workdir, "in.mp4")]);
      const script = `set -e\n${curl.replace("FFEDGE_API_KEY=ffe_...", `FFEDGE_API_KEY=${key}`)}\n`;
      const { stdout } = await run("bash", ["-c", script], { cwd: workdir, timeout: 120_000 });
      const task = JSON.parse(stdout.trim().split("\n").pop()!) as { status: string; outputs: { filename: string; url: string }[] };
      expect(task.status).toBe("completed");
      expect(task.outputs.map((output) => output.filename)).toEqual(["small.mp4"]);
    } finally {
      await rm(workdir, { recursive: true, force: true });
    }

    await page.reload();
    await ready(page);
    expect(await page.locator("#task-table tbody tr").count()).toBe(1);
    expect(await start.isVisible()).toBe(false);

    await page.goto(`${stack.edgeUrl}/console/tasks?status=failed`);
    await ready(page);
    expect(await page.locator("#task-empty").textContent()).toBe("No failed tasks. Show all tasks");
    expect(await start.isVisible()).toBe(false);
    await context.close();
  }, 240_000);
});

describe("messages a user can act on", () => {
  it("says a used verification link's address is already verified and links to sign-in", async () => {
    const { page, context, verifyLink } = await signedInUser(stack, browser);
    await page.goto(verifyLink);
    await expect.poll(() => page.locator("#verify-status").textContent(), PATIENT).toBe("This address is already verified: sign in with the password you chose.");
    expect(await page.getByRole("link", { name: "Sign in" }).getAttribute("href")).toBe("/console/signin");
    expect(await page.locator("#verify-status").textContent()).not.toContain("Sign up again");
    await context.close();
  }, 120_000);

  it("says a dead reset link is dead as the page opens, before a password is typed, and offers to ask again", async () => {
    const { page, context } = await newSession(browser);
    const email = newEmail();
    await signUp(stack, page, email);
    await page.goto(await outboxLink(stack, email, "/console/verify"));
    await page.waitForURL(/reason=verified/);
    await page.goto(`${stack.edgeUrl}/console/forgot`);
    await page.getByLabel("Email").fill(email);
    await page.getByRole("button", { name: "Send a reset link" }).click();
    const resetLink = await outboxLink(stack, email, "/console/reset");
    await page.goto(resetLink);
    await page.getByLabel("New password").fill("a reset password");
    await page.getByRole("button", { name: "Set password" }).click();
    await page.waitForURL(/reason=reset/);

    for (const link of [resetLink, `${stack.edgeUrl}/console/reset?token=made-up`, `${stack.edgeUrl}/console/reset`]) {
      await page.goto(link);
      await ready(page);
      expect(await page.locator("#reset-dead").isVisible(), link).toBe(true);
      expect(await page.locator("#reset-dead").textContent()).toContain("This reset link has expired or was already used");
      expect(await page.getByLabel("New password").isVisible()).toBe(false);
    }
    await page.getByRole("link", { name: "Ask for a new link" }).click();
    await page.waitForURL(/\/console\/forgot$/);
    await context.close();
  }, 120_000);

  it("says in plain words why an upload was refused, without a stuck progress bar", async () => {
    const { page, context } = await signedInUser(stack, browser);
    const { limits } = await page.evaluate(async () => (await fetch("/console/api/usage")).json() as Promise<{ limits: { max_upload_bytes: number } }>);
    const workdir = await mkdtemp(join(tmpdir(), "ffedge-huge-"));
    try {
      // Sparse: as large as the browser is told, without the disk space; the service refuses it before any byte is sent.
      const huge = join(workdir, "huge.mov");
      const handle = await open(huge, "w");
      await handle.truncate(limits.max_upload_bytes + 80 * 1024 * 1024);
      await handle.close();
      await page.goto(`${stack.edgeUrl}/console/files`);
      await ready(page);
      await page.getByLabel("Upload a file (kept for a day)").setInputFiles(huge);
      await page.getByRole("button", { name: "Upload", exact: true }).click();
      await expect.poll(() => page.locator("#upload-status").textContent(), PATIENT).toBe("huge.mov was not uploaded. This file is 1.1 GiB; the limit is 1 GiB.");
      expect(await page.locator("#upload-progress").isVisible()).toBe(false);
      expect(await page.locator("#upload-status").getAttribute("class")).toBe("error");
    } finally {
      await rm(workdir, { recursive: true, force: true });
    }
    await context.close();
  }, 120_000);

  it("shows the daily processing quota that submissions are held to, with units on the charts", async () => {
    const { page, context } = await signedInUser(stack, browser);
    await page.goto(`${stack.edgeUrl}/console/usage`);
    await ready(page);
    const { daily_quota: quota } = await page.evaluate(async () => (await fetch("/console/api/usage")).json() as Promise<{ daily_quota: { limit_seconds: number; remaining_seconds: number } }>);
    expect(quota).toMatchObject({ limit_seconds: 36_000, remaining_seconds: 36_000 });
    const facts = (await page.locator("#usage-facts").textContent())!;
    expect(facts).toContain("Processing today0 s of 10 h used");
    expect(facts).toContain("429 QUOTA_EXCEEDED");
    expect(facts).toContain("Files kept for24 h");
    expect(facts).not.toContain("24 h 0 min");
    expect(await page.locator("#daily-quota meter").getAttribute("max")).toBe("36000");
    expect(await page.locator("#tasks-chart svg text.unit").textContent()).toBe("tasks");
    expect(await page.locator("#seconds-chart svg text.unit").textContent()).toBe("seconds");
    await context.close();
  }, 120_000);

  it("says that revealing a webhook secret rotates it, and asks first", async () => {
    const { page, context } = await signedInUser(stack, browser);
    await page.goto(`${stack.edgeUrl}/console/webhooks`);
    await ready(page);
    const asked: string[] = [];
    page.on("dialog", (dialog) => void asked.push(dialog.message()));
    await page.getByRole("button", { name: "Rotate and reveal a new secret" }).click();
    await expect.poll(() => page.getByRole("textbox", { name: "Signing secret" }).inputValue(), PATIENT).toMatch(/^whsec_/);
    expect(asked).toEqual([expect.stringMatching(/^Rotate the signing secret\?/)]);
    await context.close();
  }, 120_000);
});

describe("every console page", () => {
  it("offers sign-out in the header, and signs out from any page", async () => {
    const { page, context } = await signedInUser(stack, browser);
    for (const path of SIGNED_IN_PAGES) {
      await page.goto(`${stack.edgeUrl}${path}`);
      await ready(page);
      expect(await page.getByRole("banner").getByRole("button", { name: "Sign out" }).isVisible(), path).toBe(true);
    }
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.waitForURL(/reason=signedout/);
    await page.goto(`${stack.edgeUrl}/console/keys`);
    await page.waitForURL(/\/console\/signin\?next=%2Fconsole%2Fkeys$/);
    await context.close();
  }, 120_000);

  it("has an icon served from the console's assets, and no request of any page fails", async () => {
    const { page, context } = await signedInUser(stack, browser);
    const failed: string[] = [];
    const watch = (response: Response) => {
      if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
    };
    page.on("response", watch);
    for (const path of [...SIGNED_IN_PAGES, "/console/signin", "/console/signup", "/console/forgot"]) {
      await page.goto(`${stack.edgeUrl}${path}`);
      await page.waitForLoadState("networkidle");
    }
    expect(failed).toEqual([]);
    const href = (await page.locator("link[rel=icon]").getAttribute("href"))!;
    expect(href).toMatch(/^\/console\/assets\/favicon\.[0-9a-f]{12}\.svg$/);
    const icon = await stack.fetch(href);
    expect(icon.status).toBe(200);
    expect(icon.headers.get("content-type")).toBe("image/svg+xml");
    expect(icon.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await icon.text()).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    await context.close();
  }, 120_000);
});
