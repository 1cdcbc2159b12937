import { type Browser, type BrowserContext, type Page, chromium } from "playwright-core";

/**
 * Debian's Chromium driven by playwright-core: `playwright install` cannot download its own
 * browser builds here, so the system one is used. The flags keep it from reaching the network
 * on its own (updates, sync, QUIC probes) and let it run as root in CI.
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}

/** A fresh browser profile (own cookies) that records every request it makes. */
export async function newSession(browser: Browser, options: { width?: number; height?: number } = {}): Promise<{ context: BrowserContext; page: Page; requests: string[] }> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: options.height ?? 800 }, acceptDownloads: true });
  const page = await context.newPage();
  const requests: string[] = [];
  page.on("request", (request) => requests.push(request.url()));
  // confirm() guards destructive buttons; the tests mean to press them.
  page.on("dialog", (dialog) => void dialog.accept());
  return { context, page, requests };
}
