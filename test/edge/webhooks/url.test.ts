import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { config } from "../../../edge/lib/config";
import { checkWebhookUrl } from "../../../edge/webhooks/url";
import { AppError } from "../../../shared/errors";

const production = config({ ...env, ENVIRONMENT: "production", DEV_FETCH_ALLOW_HOSTS: "127.0.0.1" }).devFetchAllowHosts;
const development = config(env).devFetchAllowHosts;

function codeOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return error instanceof AppError ? error.code : String(error);
  }
}

describe("checkWebhookUrl", () => {
  it("accepts a public https URL", () => {
    expect(checkWebhookUrl("https://hooks.example.com/ffedge?x=1", production).toString()).toBe("https://hooks.example.com/ffedge?x=1");
  });

  it.each([
    ["http://hooks.example.com/ffedge", "URL_NOT_ALLOWED"],
    ["http://127.0.0.1/hook", "URL_HOST_BLOCKED"],
    ["https://2130706433/hook", "URL_HOST_BLOCKED"],
    ["https://[::ffff:7f00:1]/hook", "URL_HOST_BLOCKED"],
    ["https://0x7f.1/hook", "URL_HOST_BLOCKED"],
    ["https://169.254.169.254/", "URL_HOST_BLOCKED"],
  ])("refuses %s in production, whatever the development allow-list says", (url, code) => {
    expect(codeOf(() => checkWebhookUrl(url, production))).toBe(code);
  });

  it("allows plain http only to hosts on the development allow-list", () => {
    expect(checkWebhookUrl("http://127.0.0.1:8080/hook", development).protocol).toBe("http:");
    expect(codeOf(() => checkWebhookUrl("http://hooks.example.com/hook", development))).toBe("URL_NOT_ALLOWED");
  });
});
