import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip, mediaDir } from "../../scripts/lib/media";
import { Stack, uploadLocalFile } from "../../scripts/lib/local-stack";
import { launchChromium, newSession } from "./browser";
import { PATIENT, consoleKey, ready, sidewaysOverflow, signedInUser } from "./console-session";
import { submitTask, waitForEnd } from "./helpers";
import { WebhookReceiver } from "./webhook-receiver";

const SCREENSHOTS = "docs/screenshots";
const PHONE = { width: 390, height: 844 };

let stack: Stack;
let browser: Browser;
let clipPath: string;

beforeAll(async () => {
  [stack, browser] = await Promise.all([Stack.start(), launchChromium()]);
  clipPath = await makeClip(await mediaDir(), "phone-clip.mp4", { seconds: 2, size: "320x240" });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Elements whose box or content reaches past the viewport's right edge, to say what made a page scroll sideways (runs in the page). */
const WIDEST = `[...document.querySelectorAll("body *")]
  .filter((element) => element.getBoundingClientRect().right > window.innerWidth || (element.scrollWidth > element.clientWidth && getComputedStyle(element).overflowX === "visible"))
  .slice(0, 5)
  .map((element) => element.tagName.toLowerCase() + "#" + element.id + "." + element.className + " " + Math.round(element.getBoundingClientRect().right) + "/" + element.scrollWidth)`;

/** Tables that hide columns in their own scroll box, and buttons not seen whole (runs in the page). */
const CLIPPED = `[
  ...[...document.querySelectorAll(".scroll")]
    .filter((box) => box.offsetParent !== null && box.scrollWidth > box.clientWidth)
    .map((box) => "table " + box.querySelector("table")?.id + ": " + box.scrollWidth + " > " + box.clientWidth),
  ...[...document.querySelectorAll("button, .button")]
    .filter((button) => button.offsetParent !== null && (button.getBoundingClientRect().left < 0 || button.getBoundingClientRect().right > window.innerWidth))
    .map((button) => "button " + button.textContent + " at " + Math.round(button.getBoundingClientRect().right)),
]`;

/**
 * Nothing reaches past the screen's right edge: the document does not scroll sideways, no table
 * hides columns in its own scroll box, and every button can be seen whole.
 */
async function expectFitsPhone(page: Page, name: string): Promise<void> {
  const widest = await page.evaluate<string[]>(WIDEST);
  expect(await sidewaysOverflow(page), `${name}: document scrolls sideways (${widest.join(", ")})`).toBeLessThanOrEqual(0);
  expect(await page.evaluate<string[]>(CLIPPED), name).toEqual([]);
  await page.screenshot({ path: `${SCREENSHOTS}/${name}-phone.png`, fullPage: true });
}

async function visit(page: Page, path: string): Promise<void> {
  await page.goto(`${stack.edgeUrl}${path}`);
  await ready(page);
}

describe("the console at phone width (390 px)", () => {
  it("fits every signed-out page", async () => {
    const { page, context } = await newSession(browser, PHONE);
    for (const [path, name] of [["/console/signin", "sign-in"], ["/console/signup", "sign-up"], ["/console/forgot", "forgot"], ["/console/reset?token=made-up", "reset-dead"], ["/console/verify?token=made-up", "verify"]] as const) {
      await visit(page, path);
      expect(await sidewaysOverflow(page), path).toBeLessThanOrEqual(0);
      if (name === "sign-in") await expectFitsPhone(page, name);
    }
    await context.close();
  }, 120_000);

  it("fits every signed-in page, with tasks, files, keys and webhook deliveries in them, and shows task rows as cards", async () => {
    const receiver = await new WebhookReceiver().listen();
    const { page, context } = await signedInUser(stack, browser, PHONE);
    try {
      await expectFitsPhone(page, "getting-started");

      const key = await consoleKey(page, "a key with a rather long name for a phone");
      const upload = await uploadLocalFile(stack, key, clipPath);
      const hooked = (await (await submitTask(stack, key, { command: `ffmpeg -i ${upload.url} -t 1 -vf scale=160:-2 -c:v libx264 -preset ultrafast a-rather-long-output-name-for-a-phone.mp4`, webhook: receiver.url("/hook") })).json()) as { task_id: string };
      await submitTask(stack, key, { command: `-i ${stack.edgeUrl}/uploads/missing/none.mp4 missing.mp4` });
      expect((await waitForEnd(stack, key, hooked.task_id, 90_000)).task.status).toBe("completed");
      await expect.poll(() => receiver.received("/hook").length, { timeout: 60_000 }).toBeGreaterThan(0);

      await visit(page, "/console/tasks");
      await expect.poll(() => page.locator("#task-table tbody tr").count(), PATIENT).toBe(2);
      const row = page.locator(`#row-${hooked.task_id}`);
      for (const cell of [".status-cell", ".progress-cell", ".command"]) {
        const box = (await row.locator(cell).boundingBox())!;
        expect(box.x, cell).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width, cell).toBeLessThanOrEqual(PHONE.width);
      }
      expect(await row.locator(".status-cell").evaluate((cell) => cell.ownerDocument.defaultView!.getComputedStyle(cell, "::before").content)).toBe('"Status"');
      expect(await row.locator(".status-cell").textContent()).toBe("completed");
      await expectFitsPhone(page, "tasks");

      await visit(page, `/console/tasks/${hooked.task_id}`);
      await expect.poll(() => page.locator("#delivery-table tbody tr").count(), PATIENT).toBeGreaterThan(0);
      await expectFitsPhone(page, "task");

      await visit(page, "/console/new");
      await page.getByLabel("ffmpeg command").fill("ffmpeg -i /etc/passwd out.mp4");
      await expect.poll(() => page.locator("#verdict").textContent(), PATIENT).toContain("Refused");
      await expectFitsPhone(page, "composer");

      await visit(page, "/console/files");
      const copy = page.getByRole("button", { name: /^Copy URL of / }).first();
      expect(await copy.isVisible()).toBe(true);
      await expectFitsPhone(page, "files");

      await visit(page, "/console/keys");
      await page.getByLabel("Name", { exact: true }).fill("laptop");
      await page.getByRole("button", { name: "Create key" }).click();
      await expect.poll(() => page.getByLabel("New API key").inputValue(), PATIENT).toMatch(/^ffe_/);
      await expect.poll(() => page.locator("#key-table tbody tr").count(), PATIENT).toBe(2);
      await expectFitsPhone(page, "api-keys");

      await visit(page, "/console/usage");
      await expectFitsPhone(page, "usage");

      await visit(page, "/console/webhooks");
      await expect.poll(() => page.locator("#recent-deliveries tbody tr").count(), PATIENT).toBeGreaterThan(0);
      await expectFitsPhone(page, "webhooks");

      await visit(page, "/console/account");
      await expectFitsPhone(page, "account");
    } finally {
      await receiver.close();
      await context.close();
    }
  }, 300_000);
});
