import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeClip } from "../../scripts/lib/media";
import { authed, uploadLocalFile } from "../../scripts/lib/local-stack";
import { ENDPOINT_EVENT_TYPES } from "../../shared/schemas/webhooks";
import { launchChromium } from "./browser";
import { CLIPPED_BUTTONS, LocalS3, S3RVER_KEY, addDestination, closedPort } from "./console-workflow-fixtures";
import { PATIENT, consoleKey, ready, sidewaysOverflow, signedInUser } from "./console-session";
import { submitTask, useStackWithClip, waitForEnd } from "./helpers";
import { WebhookReceiver } from "./webhook-receiver";

/** The console's workflow pages on the real stack: presets, a chained task's steps, destinations, webhook endpoints. */
const ctx = useStackWithClip({ seconds: 3, size: "320x240" });
const RUN = { timeout: 90_000 };
const PHONE = { width: 390, height: 844 };
/** Where a run may keep screenshots of the pages for a look (CONSOLE_SHOTS=<dir>); unset, none are taken. */
const SHOTS = process.env.CONSOLE_SHOTS;

let browser: Browser;
let page: Page;
let key: string;
let close: (() => Promise<void>) | undefined;
let session: Promise<void> | undefined;

const s3 = new LocalS3();

beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await close?.();
  await browser?.close();
  await s3.close();
});

/**
 * The browser's user, signed up and in through the pages once (expect.poll runs only inside a
 * test), with a file of its own for the run form's file picker.
 */
function signedIn(): Promise<void> {
  session ??= (async () => {
    const user = await signedInUser(ctx.stack, browser);
    page = user.page;
    close = () => user.context.close();
    key = await consoleKey(page);
    await uploadLocalFile(ctx.stack, key, await makeClip(ctx.dir, "console-clip.mp4", { seconds: 2, size: "320x240" }));
  })();
  return session;
}

async function visit(path: string): Promise<void> {
  await signedIn();
  await page.goto(`${ctx.stack.edgeUrl}${path}`);
  await ready(page);
}

const PARAMETERS = { type: "object", required: ["input"], properties: { input: { type: "string", examples: ["https://example.com/in.mp4"] }, width: { type: "integer", minimum: 16, maximum: 640, default: 320 } } };

describe("the console's workflow pages", () => {
  it("saves a preset in the page, shows a refusal at the field it names, and runs it from its form to a completed task", async () => {
    await visit("/console/presets");
    expect(await page.locator("#builtin-presets tbody tr").count()).toBeGreaterThan(0);
    await page.getByLabel("Name", { exact: true }).fill("small-web");
    await page.getByLabel("Parameters (JSON Schema)").fill(JSON.stringify(PARAMETERS));
    // An unknown placeholder: PRESET_INVALID, shown next to the command.
    await page.getByLabel("Command", { exact: true }).fill("ffmpeg -i {{input}} -vf scale={{wdth}}:-2 -t 1 -an out.mp4");
    await page.getByRole("button", { name: "Save preset" }).click();
    await expect.poll(() => page.locator("#preset-command-error").textContent(), PATIENT).toContain("PRESET_INVALID");
    expect(await page.getByLabel("Command", { exact: true }).getAttribute("aria-invalid")).toBe("true");

    await page.getByLabel("Command", { exact: true }).fill("ffmpeg -i {{input}} -vf scale={{width}}:-2 -t 1 -an out.mp4");
    await page.getByRole("button", { name: "Save preset" }).click();
    await expect.poll(() => page.locator('#own-presets tr[data-preset="small-web"]').count(), PATIENT).toBe(1);
    expect(await page.locator("#preset-command-error").isHidden()).toBe(true);

    // The composer lists it, linking to its run form.
    await visit("/console/new");
    const link = page.getByRole("link", { name: "small-web", exact: true });
    await expect.poll(() => link.count(), PATIENT).toBe(1);
    await link.click();
    await page.waitForURL(/\/console\/presets\?run=small-web$/);
    await ready(page);
    await expect.poll(() => page.locator("#run-section").isVisible(), PATIENT).toBe(true);
    const width = page.getByLabel("width");
    expect(await width.getAttribute("type")).toBe("number");
    expect([await width.getAttribute("min"), await width.getAttribute("max"), await width.inputValue()]).toEqual(["16", "640", "320"]);

    // The file picker fills the input parameter with one of the user's files.
    await page.getByLabel("Or use one of your files as input").selectOption({ index: 1 });
    expect(await page.getByLabel("input (required)").inputValue()).toMatch(/^https?:\/\//);
    await width.fill("9999");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await expect.poll(() => page.locator("#param-width-error").textContent(), PATIENT).toContain("params.width");
    expect(page.url()).toContain("/console/presets");

    await width.fill("160");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.waitForURL(/\/console\/tasks\/tsk_/, PATIENT);
    await ready(page);
    await expect.poll(() => page.locator("#task-status").textContent(), RUN).toBe("completed");
    expect(await page.locator("#task-command").textContent()).toContain("scale=160:-2");
    expect(await page.locator("#task-outputs").textContent()).toContain("out.mp4");

    // Edited and deleted in the page.
    await visit("/console/presets");
    await page.getByRole("button", { name: "Edit small-web" }).click();
    expect(await page.getByLabel("Command", { exact: true }).inputValue()).toContain("scale={{width}}:-2");
    await page.getByLabel("Description (optional)").fill("Small and quick");
    await page.getByRole("button", { name: "Save changes" }).click();
    const row = page.locator('#own-presets tr[data-preset="small-web"]');
    await expect.poll(() => row.locator("td").nth(1).textContent(), PATIENT).toBe("Small and quick");
    await page.getByRole("button", { name: "Delete small-web" }).click();
    await expect.poll(() => row.count(), PATIENT).toBe(0);
    expect(await page.locator("#own-empty").isVisible()).toBe(true);
  }, 300_000);

  it("shows a chained task's steps, each completed, and Run again retries it with its steps", async () => {
    await signedIn();
    const response = await submitTask(ctx.stack, key, {
      steps: [
        { command: `ffmpeg -i ${ctx.clipUrl} -t 1 -c copy clip.mp4`, publish: false },
        { command: "ffmpeg -i {{steps.0.outputs.clip.mp4}} -vf scale=160:-2 -an small.mp4" },
      ],
    });
    expect(response.status, await response.clone().text()).toBe(201);
    const { task_id } = (await response.json()) as { task_id: string };
    await visit(`/console/tasks/${task_id}`);
    const steps = page.locator("#task-steps > li");
    await expect.poll(() => steps.evaluateAll((items) => items.map((item) => item.getAttribute("data-status"))), RUN).toEqual(["completed", "completed"]);
    expect(await page.locator("#step-0").textContent()).toContain("outputs private");
    expect(await page.locator("#step-1").textContent()).toContain("small.mp4");
    expect(await page.getByLabel("Progress of step 1").getAttribute("value")).toBe("100");
    // The composer writes one command: a chained task is not offered to it.
    expect(await page.locator("#edit-task").isHidden()).toBe(true);

    await page.getByRole("button", { name: "Run again" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/console/tasks/tsk_") && !url.pathname.endsWith(task_id), PATIENT);
    await ready(page);
    const retried = new URL(page.url()).pathname.split("/").pop()!;
    expect((await waitForEnd(ctx.stack, key, retried, 90_000)).task.status).toBe("completed");
    await expect.poll(() => page.locator("#task-steps > li").count(), PATIENT).toBe(2);
  }, 300_000);

  it("adds a destination without showing its secret back, and Test says a closed port is unreachable", async () => {
    await visit("/console/destinations");
    await addDestination(page, { name: "closed-port", endpoint: `http://127.0.0.1:${await closedPort()}`, key: "AKIAEXAMPLE", secret: "very-secret-value-1234" });
    const row = page.locator('#destination-table tr[data-destination="closed-port"]');
    expect(await row.textContent()).toContain("AKIA");
    expect(await page.getByLabel("Secret access key").inputValue()).toBe("");
    expect(await page.content()).not.toContain("very-secret-value-1234");

    await page.getByRole("button", { name: "Test closed-port" }).click();
    await expect.poll(() => row.locator(".test-result").textContent(), RUN).toContain("DESTINATION_UNREACHABLE");

    await page.getByRole("button", { name: "Delete closed-port" }).click();
    await expect.poll(() => row.count(), PATIENT).toBe(0);
    const { destinations } = (await (await ctx.stack.fetch("/v1/destinations", authed(key))).json()) as { destinations: unknown[] };
    expect(destinations).toEqual([]);
  }, 120_000);

  it("runs a task from the composer to a destination picked there, and the task page shows each output delivered", async () => {
    await visit("/console/destinations");
    await addDestination(page, { name: "local-bucket", endpoint: await s3.endpoint(), key: S3RVER_KEY, secret: S3RVER_KEY });
    const row = page.locator('#destination-table tr[data-destination="local-bucket"]');
    await page.getByRole("button", { name: "Test local-bucket" }).click();
    await expect.poll(() => row.locator(".test-result").textContent(), RUN).toMatch(/^OK/);

    await visit("/console/new");
    await page.getByLabel("ffmpeg command").fill(`ffmpeg -i ${ctx.clipUrl} -t 1 -c copy cut.mp4`);
    await expect.poll(() => page.locator("#composer-destination-fieldset").isVisible(), PATIENT).toBe(true);
    await page.getByLabel("Destination", { exact: true }).selectOption({ label: "local-bucket (user-media)" });
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.waitForURL(/\/console\/tasks\/tsk_/, PATIENT);
    await ready(page);
    await expect.poll(() => page.locator("#task-status").textContent(), RUN).toBe("completed");
    await expect.poll(() => page.locator("#task-outputs .destination-delivered").count(), RUN).toBe(1);
    expect(await page.locator("#task-destination").textContent()).toBe("Outputs are also delivered to your destination local-bucket.");
    expect(await page.locator("#task-outputs .destination").textContent()).toMatch(/delivered .*cut\.mp4 \(1 attempt\)$/);
    expect(await page.locator("#retry-deliveries").isHidden()).toBe(true);
  }, 180_000);

  it("edits a destination's prefix in the page, keeping its key pair, and the Test after saving passes", async () => {
    await visit("/console/destinations");
    const row = page.locator('#destination-table tr[data-destination="local-bucket"]');
    const fingerprint = await row.locator("td").nth(3).textContent();
    await page.getByRole("button", { name: "Edit local-bucket" }).click();
    expect([await page.getByLabel("Bucket", { exact: true }).inputValue(), await page.getByLabel("Secret access key").inputValue()]).toEqual(["user-media", ""]);
    // One half of a key pair is refused in the page; a bad prefix at its field, by the API.
    await page.getByLabel("Access key id").fill("AKIAHALF");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => page.locator("#destination-secret_access_key-error").textContent(), PATIENT).toContain("Fill in the secret access key too");
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/destination-edit.png`, fullPage: true });
    await page.getByLabel("Access key id").fill("");
    await page.getByLabel("Key prefix (optional)").fill("a/../b/");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => page.locator("#destination-prefix-error").textContent(), PATIENT).toContain("VALIDATION_FAILED");

    await page.getByLabel("Key prefix (optional)").fill("edited/");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => row.locator("td").nth(1).textContent(), PATIENT).toBe("user-media/edited/");
    await expect.poll(() => row.locator(".test-result").textContent(), RUN).toMatch(/^OK/);
    expect(await row.locator("td").nth(3).textContent()).toBe(fingerprint);
    await page.getByRole("button", { name: "Test local-bucket" }).click();
    await expect.poll(() => row.locator(".test-result").textContent(), RUN).toMatch(/^OK/);
  }, 120_000);

  it("shows a preset's destination in the table, and deleting that destination shows DESTINATION_IN_USE naming the preset", async () => {
    await visit("/console/presets");
    await page.getByLabel("Name", { exact: true }).fill("to-bucket");
    await page.getByLabel("Command", { exact: true }).fill("ffmpeg -i {{input}} -t 1 -c copy out.mp4");
    await page.getByLabel("Parameters (JSON Schema)").fill(JSON.stringify({ type: "object", properties: { input: { type: "string", examples: [ctx.clipUrl] } }, required: ["input"] }));
    await expect.poll(() => page.locator("#preset-destination-fieldset").isVisible(), PATIENT).toBe(true);
    await page.locator("#preset-destination").selectOption({ label: "local-bucket (user-media)" });
    await page.locator("#preset-destination-mode").selectOption("only");
    await page.getByRole("button", { name: "Save preset" }).click();
    const preset = page.locator('#own-presets tr[data-preset="to-bucket"]');
    await expect.poll(() => preset.locator("td").nth(4).textContent(), PATIENT).toBe("local-bucket (only)");

    await visit("/console/destinations");
    const row = page.locator('#destination-table tr[data-destination="local-bucket"]');
    await page.getByRole("button", { name: "Delete local-bucket" }).click();
    await expect.poll(() => row.locator(".test-result").textContent(), PATIENT).toContain("DESTINATION_IN_USE");
    expect(await row.locator(".test-result").textContent()).toContain("to-bucket");
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/destination-in-use.png`, fullPage: true });
    expect(await row.count()).toBe(1);

    // Cleared in the preset's editor, the table says so.
    await visit("/console/presets");
    await page.getByRole("button", { name: "Edit to-bucket" }).click();
    await expect.poll(() => page.locator("#preset-destination option:checked").textContent(), PATIENT).toBe("local-bucket (user-media)");
    await page.locator("#preset-destination").selectOption("");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => preset.locator("td").nth(4).textContent(), PATIENT).toBe("—");
  }, 120_000);

  it("says where a task's outputs will go while it runs, then where they went", async () => {
    await signedIn();
    const submitted = await submitTask(ctx.stack, key, {
      command: `ffmpeg -stream_loop 3 -i ${ctx.clipUrl} -vf scale=1280:-2 -c:v libx264 -preset veryslow -an slow.mp4`,
      destination: { id: "local-bucket", mode: "only" },
    });
    const { task_id } = (await submitted.json()) as { task_id: string };
    await visit(`/console/tasks/${task_id}`);
    const where = page.locator("#task-destination");
    await expect.poll(() => where.textContent(), PATIENT).toBe("Once the task completes, its outputs are delivered to your destination local-bucket only (copy here removed once delivered).");
    expect(await page.locator("#task-status").textContent()).not.toBe("completed");
    await expect.poll(() => page.locator("#task-outputs .destination-delivered").count(), RUN).toBe(1);
    expect(await where.textContent()).toBe("Outputs are delivered to your destination local-bucket only.");
  }, 180_000);

  it("adds a webhook endpoint with the API's events, shows its secret once, disables and deletes it", async () => {
    await visit("/console/webhooks");
    const offered = await page.locator('#endpoint-form input[name="events"]').evaluateAll((boxes) => boxes.map((box) => box.getAttribute("value")));
    expect(offered).toEqual([...ENDPOINT_EVENT_TYPES]);
    const url = `http://127.0.0.1:${await closedPort()}/hook`;
    await page.getByLabel("URL", { exact: true }).fill(url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await expect.poll(() => page.locator("#endpoint-secret").isVisible(), PATIENT).toBe(true);
    const secret = await page.getByLabel("Endpoint signing secret").inputValue();
    expect(secret).toMatch(/^whsec_/);
    const row = page.locator("#endpoint-table tbody tr");
    await expect.poll(() => row.count(), PATIENT).toBe(1);
    expect(await row.textContent()).toContain(url);

    // Shown once: a fresh visit lists the endpoint without its secret.
    await visit("/console/webhooks");
    expect(await page.locator("#endpoint-secret").isHidden()).toBe(true);
    expect(await page.content()).not.toContain(secret);
    await expect.poll(() => row.count(), PATIENT).toBe(1);

    await page.getByRole("button", { name: `Disable ${url}` }).click();
    await expect.poll(() => row.locator("td").nth(2).textContent(), PATIENT).toBe("no (disabled)");
    const { endpoints } = (await (await ctx.stack.fetch("/v1/webhooks/endpoints", authed(key))).json()) as { endpoints: { enabled: boolean }[] };
    expect(endpoints.map((endpoint) => endpoint.enabled)).toEqual([false]);

    await page.getByRole("button", { name: `Delete ${url}` }).click();
    await expect.poll(() => row.count(), PATIENT).toBe(0);
    expect(await page.locator("#endpoint-empty").isVisible()).toBe(true);
  }, 120_000);

  it("shows an endpoint's delivery log after a task ends, and Redeliver sends the event again", async () => {
    const receiver = await new WebhookReceiver().listen();
    try {
      await visit("/console/webhooks");
      await page.getByLabel("URL", { exact: true }).fill(receiver.url("/subscribed"));
      await page.getByRole("button", { name: "Add endpoint" }).click();
      await expect.poll(() => page.locator("#endpoint-table tbody tr").count(), PATIENT).toBe(1);
      const submitted = await submitTask(ctx.stack, key, { command: `ffmpeg -i ${ctx.clipUrl} -t 1 -c copy hooked.mp4` });
      const { task_id } = (await submitted.json()) as { task_id: string };
      expect((await waitForEnd(ctx.stack, key, task_id, 90_000)).task.status).toBe("completed");
      await expect.poll(() => receiver.received("/subscribed").length, RUN).toBe(1);

      await page.getByRole("button", { name: `Deliveries ${receiver.url("/subscribed")}` }).click();
      const event = page.locator("#endpoint-events tbody tr");
      await expect.poll(() => event.count(), PATIENT).toBe(1);
      expect(await event.locator("td").allTextContents()).toEqual(["task.completed", task_id, expect.any(String), "yes", "200", "Redeliver"]);
      await event.getByRole("button", { name: /^Redeliver / }).click();
      await expect.poll(() => receiver.received("/subscribed").length, RUN).toBe(2);
    } finally {
      await receiver.close();
    }
  }, 180_000);

  it("edits an endpoint's events and description, and the list shows them", async () => {
    await visit("/console/webhooks");
    const url = `http://127.0.0.1:${await closedPort()}/edited`;
    await page.getByLabel("URL", { exact: true }).fill(url);
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const row = page.locator("#endpoint-table tbody tr", { hasText: url });
    await expect.poll(() => row.count(), PATIENT).toBe(1);
    await page.getByRole("button", { name: `Edit ${url}` }).click();
    expect(await page.getByLabel("URL", { exact: true }).inputValue()).toBe(url);
    // No event at all is refused in the page, at the events.
    for (const box of await page.locator('#endpoint-form input[name="events"]').all()) await box.uncheck();
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => page.locator("#endpoint-events-fieldset-error").textContent(), PATIENT).toContain("at least one event");
    await page.getByLabel("task.completed", { exact: true }).check();
    await page.getByLabel("file.expired", { exact: true }).check();
    await page.getByLabel("Description (optional)").fill("Archive sync");
    await page.getByRole("button", { name: "Save changes" }).click();
    await expect.poll(() => row.locator("td").nth(1).textContent(), PATIENT).toBe("task.completed, file.expired");
    expect(await row.locator("td").first().textContent()).toContain("Archive sync");
    const { endpoints } = (await (await ctx.stack.fetch("/v1/webhooks/endpoints", authed(key))).json()) as { endpoints: { url: string; events: string[] }[] };
    expect(endpoints.find((endpoint) => endpoint.url === url)?.events.sort()).toEqual(["file.expired", "task.completed"]);
  }, 120_000);

  it("fits a phone: presets with a run form open, a chained task's steps, destinations and endpoints", async () => {
    await signedIn();
    const post = (path: string, body: unknown) => ctx.stack.fetch(path, authed(key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }));
    expect((await post("/v1/destinations", { name: "phone-bucket", type: "s3", endpoint: `http://127.0.0.1:${await closedPort()}`, region: "us-east-1", bucket: "user-media", prefix: "a/long/prefix/for/the/phone/", access_key_id: "AKIAEXAMPLE", secret_access_key: "secret-secret" })).status).toBe(201);
    expect((await post("/v1/webhooks/endpoints", { url: `http://127.0.0.1:${await closedPort()}/a/rather/long/path/to/the/receiver`, events: ["task.completed", "task.failed"] })).status).toBe(201);
    const submitted = await submitTask(ctx.stack, key, { steps: [{ command: `ffmpeg -i ${ctx.clipUrl} -t 1 -c copy clip.mp4` }, { command: "ffmpeg -i {{steps.0.outputs.clip.mp4}} -frames:v 1 thumb.jpg" }] });
    const { task_id } = (await submitted.json()) as { task_id: string };
    await waitForEnd(ctx.stack, key, task_id, 90_000);

    await page.setViewportSize(PHONE);
    const pages: [string, string, (() => Promise<void>)?][] = [
      ["presets", "/console/presets", async () => {
        await page.locator("#builtin-presets tbody tr").first().getByRole("button", { name: /^Run / }).click();
        await expect.poll(() => page.locator("#run-section").isVisible(), PATIENT).toBe(true);
      }],
      ["task-steps", `/console/tasks/${task_id}`, () => expect.poll(() => page.locator("#task-steps > li").count(), PATIENT).toBe(2)],
      ["destinations", "/console/destinations", () => expect.poll(() => page.locator("#destination-table tbody tr").count(), PATIENT).toBeGreaterThan(1)],
      ["webhooks", "/console/webhooks", () => expect.poll(() => page.locator("#endpoint-table tbody tr").count(), PATIENT).toBeGreaterThan(0)],
    ];
    for (const [name, path, settle] of pages) {
      await visit(path);
      await settle?.();
      expect(await sidewaysOverflow(page), `${name} scrolls sideways`).toBeLessThanOrEqual(0);
      expect(await page.evaluate<string[]>(CLIPPED_BUTTONS), name).toEqual([]);
      if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}-phone.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    if (SHOTS) {
      for (const [name, path, settle] of pages) {
        await visit(path);
        await settle?.();
        await page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
      }
    }
  }, 300_000);
});
