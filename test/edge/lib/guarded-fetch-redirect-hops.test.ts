import { env } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { guardedFetch } from "../../../edge/lib/guarded-fetch";
import { originUrl } from "../files/fixtures";
import { originPaths } from "../files/origin";

async function codeOf(raw: string): Promise<string> {
  const outcome = await guardedFetch(env, raw).then(async ({ response }) => {
    await response.body?.cancel();
    return "FETCHED";
  }, (error: unknown) => error);
  if (typeof outcome === "string") return outcome;
  expect(outcome).toBeInstanceOf(AppError);
  return (outcome as AppError).code;
}

describe("guardedFetch: every redirect hop is judged as written", () => {
  const port = String(inject("originPort"));

  it.each([
    ["hex", `http://0x7f000001:${port}/file/10`],
    ["integer", `http://2130706433:${port}/file/10`],
    ["short form", `http://127.1:${port}/file/10`],
    ["octal", `http://0177.0.0.1:${port}/file/10`],
    ["a backslash before '@'", `http://127.0.0.1:${port}\\@example.com/file/10`],
    ["a port with a leading zero", `http://127.0.0.1:0${port}/file/10`],
  ])("refuses a hop to the allow-listed origin written in %s, as at submission", async (_form, target) => {
    const atSubmission = await codeOf(target);
    expect(atSubmission).toMatch(/^URL_/);
    expect(await codeOf(originUrl(originPaths.redirect(target)))).toBe(atSubmission);
  });

  it("refuses a scheme-relative hop to the origin in hex", async () => {
    expect(await codeOf(originUrl(originPaths.redirect(`//0x7f000001:${port}/file/10`)))).toBe("URL_NOT_ALLOWED");
  });

  it("refuses a relative hop that WHATWG would read as another host", async () => {
    expect(await codeOf(originUrl(originPaths.redirect(`/\\127.0.0.1:${port}/file/10`)))).toBe("URL_NOT_ALLOWED");
  });

  it("still follows a hop written plainly", async () => {
    expect(await codeOf(originUrl(originPaths.redirect(originUrl(originPaths.file(10)))))).toBe("FETCHED");
  });
});
