import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { Stack, uploadLocalFile } from "../../scripts/lib/local-stack";
import { launchChromium, newSession } from "./browser";
import { waitForEnd } from "./helpers";

const PASSWORD = "correct horse battery";

/** What the tests read of <video> and <img> elements (the node project has no DOM types). */
type Media = { readyState: number; duration: number };
type Picture = { complete: boolean; naturalWidth: number };
const PATIENT = { timeout: 20_000 };
const RUN = { timeout: 90_000 };

let stack: Stack;
let browser: Browser;
let clipPath: string;

beforeAll(async () => {
  [stack, browser] = await Promise.all([Stack.start(), launchChromium()]);
  clipPath = await makeClip(await mediaDir(), "clip.mp4", { seconds: 3, size: "320x240" });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

async function ready(page: Page): Promise<void> {
  await page.waitForSelector("body[data-ready=true]");
}

async function visit(page: Page, path: string): Promise<void> {
  await page.goto(`${stack.edgeUrl}${path}`);
  await ready(page);
}

/** A new verified user signed in at the given width, with an API key made through the console's own API. */
async function signedIn(width = 1280): Promise<{ page: Page; close: () => Promise<void>; key: string }> {
  const { page, context } = await newSession(browser, { width, height: 900 });
  const email = `tasks-${Math.random().toString(36).slice(2, 10)}@example.com`;
  await page.goto(`${stack.edgeUrl}/console/signup`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Create account" }).click();
  await expect.poll(() => page.locator("#flash").textContent(), PATIENT).toContain("verification link");
  let link: string | undefined;
  await expect.poll(async () => {
    const { messages } = (await (await stack.fetch(`/console/api/dev/outbox?to=${encodeURIComponent(email)}`)).json()) as { messages: { links: string[] }[] };
    link = messages.flatMap((message) => message.links).find((candidate) => candidate.includes("/console/verify"));
    return link;
  }, PATIENT).toBeDefined();
  await page.goto(link!);
  await page.waitForURL(/reason=verified/);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/console\/tasks/);
  await ready(page);
  const key = await page.evaluate(async () => {
    const { csrf_token } = (await (await fetch("/console/api/session")).json()) as { csrf_token: string };
    const response = await fetch("/console/api/keys", { method: "POST", headers: { "content-type": "application/json", "x-csrf-token": csrf_token }, body: JSON.stringify({ name: "test" }) });
    return ((await response.json()) as { key: string }).key;
  });
  return { page, key, close: () => context.close() };
}

async function uploadThroughFilesPage(page: Page): Promise<void> {
  await visit(page, "/console/files");
  const before = await page.locator("#file-table tbody tr").count();
  await page.getByLabel("Upload a file (kept for a day)").setInputFiles(clipPath);
  await page.getByRole("button", { name: "Upload", exact: true }).click();
  await expect.poll(() => page.locator("#file-table tbody tr").count(), { timeout: 60_000 }).toBe(before + 1);
}

/** How far the page scrolls sideways; when it does, the elements that stick out are named in the failure. */
async function expectNoSidewaysScroll(page: Page): Promise<void> {
  const { overflow, offenders } = await page.evaluate<{ overflow: number; offenders: string[] }>(`(() => {
    const width = document.documentElement.clientWidth;
    const name = (node) => node.tagName.toLowerCase() + (node.id ? "#" + node.id : "") + (node.className ? "." + String(node.className).replace(/ /g, ".") : "");
    const offenders = [...document.querySelectorAll("body *")].filter((node) => node.getBoundingClientRect().right > width + 1).map(name);
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let text = walker.nextNode(); text; text = walker.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(text);
      if (range.getBoundingClientRect().right > width + 1) offenders.push("text in " + name(text.parentElement) + ": " + text.textContent.slice(0, 40));
    }
    return { overflow: document.documentElement.scrollWidth - width, offenders: offenders.slice(0, 8) };
  })()`);
  expect(overflow, offenders.join(", ")).toBeLessThanOrEqual(0);
}

describe("tasks told apart in the console", () => {
  it("tells same-named files apart, fills the composer from a recipe, previews the output, copies the task as curl that runs, and runs it again", async () => {
    const { page, close, key } = await signedIn();
    await uploadThroughFilesPage(page);
    await uploadThroughFilesPage(page);
    const identities = await page.locator("#file-table .file-identity").allTextContents();
    expect(await page.getByRole("link", { name: "clip.mp4" }).count()).toBe(2);
    expect(identities).toHaveLength(2);
    for (const identity of identities) expect(identity).toMatch(/^\d+(\.\d)? KiB · uploaded .+ · …[0-9a-f]{6}$/);
    expect(identities[0]).not.toBe(identities[1]);

    await visit(page, "/console/new");
    const options = (await page.locator("#file-pick option").allTextContents()).slice(1);
    expect(options).toHaveLength(2);
    expect(new Set(options).size).toBe(2);
    await page.getByLabel("File", { exact: true }).selectOption({ index: 2 });
    const picked = await page.getByLabel("File", { exact: true }).inputValue();
    await page.getByRole("button", { name: "Thumbnail" }).click();
    const command = page.getByLabel("ffmpeg command");
    expect(await command.inputValue()).toBe(`ffmpeg -ss 1 -i ${picked} -frames:v 1 -vf scale=640:-2 thumbnail.jpg`);
    await expect.poll(() => page.locator("#verdict").textContent(), PATIENT).toContain("Accepted");
    await page.getByRole("button", { name: "Watermark" }).click();
    await expect.poll(() => page.locator("#verdict").textContent(), PATIENT).toContain("Refused");
    expect(await page.locator("#command-marked mark").textContent()).toBe("{image}");
    expect(await page.locator("#recipe-note").textContent()).toContain("{image}");
    await page.getByRole("button", { name: "Trim" }).click();
    await expect.poll(() => page.locator("#verdict").textContent(), PATIENT).toContain("Accepted");
    const trim = await command.inputValue();
    expect(trim).toBe(`ffmpeg -ss 1 -i ${picked} -t 5 -c:v libx264 -preset veryfast -c:a aac trimmed.mp4`);
    await page.getByRole("button", { name: "Run" }).click();
    await page.waitForURL(/\/console\/tasks\/tsk_/);
    await ready(page);
    const taskId = new URL(page.url()).pathname.split("/").pop()!;

    expect(await page.getByRole("heading", { level: 1 }).textContent()).toMatch(new RegExp(`^Task ${taskId}`));
    await expect.poll(() => page.locator("#task-status").textContent(), RUN).toBe("completed");
    await expect.poll(() => page.locator("#task-elapsed").textContent(), PATIENT).toMatch(/^· ran \d+ s$/);
    const video = page.getByLabel("Preview of trimmed.mp4");
    // The preview plays from the CDN under the console's CSP: its metadata loads (HAVE_METADATA or more).
    await expect.poll(() => video.evaluate((node) => (node as unknown as Media).readyState), PATIENT).toBeGreaterThanOrEqual(1);
    expect(await video.evaluate((node) => (node as unknown as Media).duration)).toBeGreaterThan(1);

    await page.getByText("Copy as curl, CLI or SDK").click();
    const curl = (await page.locator("#snippet-curl").textContent())!;
    expect(curl).toContain(`${stack.edgeUrl}/v1/tasks`);
    expect(await page.locator("#snippet-cli").textContent()).toContain('ffedge run "ffmpeg -ss 1 -i ');
    expect(await page.locator("#snippet-sdk").textContent()).toContain(`baseUrl: "${stack.edgeUrl}"`);
    const { stdout } = await promisify(execFile)("sh", ["-c", curl], { env: { ...process.env, FFEDGE_API_KEY: key } });
    const copied = JSON.parse(stdout) as { task_id: string; status: string };
    expect(copied.status).toBe("pending");
    expect((await waitForEnd(stack, key, copied.task_id, 90_000)).task.status).toBe("completed");

    await page.getByRole("button", { name: "Run again" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/console/tasks/tsk_") && !url.pathname.endsWith(taskId));
    await ready(page);
    expect(await page.locator("#task-command").textContent()).toBe(trim);
    const rerunId = new URL(page.url()).pathname.split("/").pop()!;
    await expect.poll(() => page.locator("#task-status").textContent(), RUN).toBe("completed");

    await page.getByRole("link", { name: "Edit as new task" }).click();
    await page.waitForURL(/\/console\/new\?from=/);
    await ready(page);
    await expect.poll(() => page.getByLabel("ffmpeg command").inputValue(), PATIENT).toContain("trimmed.mp4");

    // A thumbnail run from a key shows as an image preview.
    const thumbnail = await (await stack.fetch("/v1/tasks", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ command: `ffmpeg -ss 1 -i ${picked} -frames:v 1 -vf scale=640:-2 thumbnail.jpg` }) })).json() as { task_id: string };
    await waitForEnd(stack, key, thumbnail.task_id, 90_000);
    await visit(page, `/console/tasks/${thumbnail.task_id}`);
    const image = page.getByRole("img", { name: "Preview of thumbnail.jpg" });
    await expect.poll(() => image.evaluate((node) => (node as unknown as Picture).complete && (node as unknown as Picture).naturalWidth), PATIENT).toBe(640);

    await visit(page, "/console/tasks");
    const row = page.locator(`#row-${rerunId}`);
    await expect.poll(() => row.locator(".command").textContent(), PATIENT).toBe("clip.mp4 → trimmed.mp4 · -ss 1 -t 5 -c:v libx264 -preset veryfast -c:a aac");
    expect(await row.locator(".outputs-cell").textContent()).toBe("1 · trimmed.mp4");
    expect(await row.locator(".duration-cell").textContent()).toMatch(/^\d+ s$/);
    expect(await row.locator(".error-cell").textContent()).toBe("—");
    expect(await page.locator(`#row-${thumbnail.task_id} .command`).textContent()).toBe("clip.mp4 → thumbnail.jpg · scale=640:-2 -ss 1 -frames:v 1");
    await close();
  }, 400_000);

  it("shows a failed task's short error and a canceled task as canceled in the list and on its page", async () => {
    const { page, close, key } = await signedIn();
    const submit = async (command: string) =>
      ((await (await stack.fetch("/v1/tasks", { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ command }) })).json()) as { task_id: string }).task_id;
    // The CDN answers 404 for an upload that does not exist: the task fails at once.
    const failed = await submit(`-i ${stack.edgeUrl}/uploads/missing/gone.mp4 out.mp4`);
    const upload = await uploadLocalFile(stack, key, clipPath);
    // Canceled at once, long before a veryslow encode could end.
    const slow = await submit(`-i ${upload.url} -c:v libx264 -preset veryslow slow.mp4`);
    expect((await stack.fetch(`/v1/tasks/${slow}/cancel`, { method: "POST", headers: { authorization: `Bearer ${key}` } })).status).toBeLessThan(300);
    await waitForEnd(stack, key, failed, 60_000);
    expect((await waitForEnd(stack, key, slow, 60_000)).task.error_code).toBe("CANCELED");

    await visit(page, "/console/tasks");
    const failedRow = page.locator(`#row-${failed}`);
    expect(await failedRow.locator(".status-cell").textContent()).toBe("failed");
    const error = (await failedRow.locator(".error-cell").textContent())!;
    expect(error).not.toBe("—");
    expect(error.length).toBeLessThanOrEqual(80);
    expect(await failedRow.locator(".command").textContent()).toBe("gone.mp4 → out.mp4");
    const slowRow = page.locator(`#row-${slow}`);
    expect(await slowRow.locator(".status-cell").textContent()).toBe("canceled");
    expect(await slowRow.locator(".error-cell").textContent()).toBe("canceled");
    await visit(page, `/console/tasks/${slow}`);
    expect(await page.locator("#task-status").textContent()).toBe("canceled");
    await close();
  }, 180_000);
});

describe("the task pages at phone width", () => {
  it("lists, shows and composes without sideways scrolling at 390 px", async () => {
    const { page, close, key } = await signedIn(390);
    await uploadThroughFilesPage(page);
    await visit(page, "/console/new");
    await page.getByRole("button", { name: "GIF" }).click();
    await expect.poll(() => page.locator("#verdict").textContent(), PATIENT).toContain("Accepted");
    await expectNoSidewaysScroll(page);
    await page.getByRole("button", { name: "Run" }).click();
    await page.waitForURL(/\/console\/tasks\/tsk_/);
    await ready(page);
    await expect.poll(() => page.locator("#task-status").textContent(), RUN).toBe("completed");
    await expect.poll(() => page.getByRole("img", { name: "Preview of clip.gif" }).evaluate((node) => (node as unknown as Picture).naturalWidth), PATIENT).toBeGreaterThan(0);
    await page.getByText("Copy as curl, CLI or SDK").click();
    await expectNoSidewaysScroll(page);
    await visit(page, "/console/tasks");
    expect(await page.locator("#task-table tbody tr").count()).toBe(1);
    expect(await page.locator("#task-table .command").textContent()).toMatch(/^clip\.mp4 → clip\.gif · /);
    await expectNoSidewaysScroll(page);
    expect(key).toMatch(/^ffe_/);
    await close();
  }, 300_000);
});

describe("the console's Content-Security-Policy", () => {
  it("lets images, audio and video come from the CDN's origin only, and keeps everything else to its own", async () => {
    const policy = (await stack.fetch("/console/signin")).headers.get("content-security-policy")!;
    const directives = Object.fromEntries(policy.split("; ").map((directive) => [directive.split(" ")[0], directive.split(" ").slice(1).join(" ")]));
    expect(directives).toMatchObject({ "default-src": "'none'", "script-src": "'self'", "connect-src": "'self'", "img-src": `'self' ${stack.edgeUrl}`, "media-src": stack.edgeUrl });
    expect(policy).not.toMatch(/\*|unsafe|data:|blob:/);
  });
});
