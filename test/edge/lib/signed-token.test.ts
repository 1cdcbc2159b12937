import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { signToken, verifyToken } from "../../../edge/lib/signed-token";

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  const error = await promise.then(() => undefined, (reason: unknown) => reason);
  return error instanceof AppError ? error.code : String(error);
}

describe("signed tokens", () => {
  it("verifies its own token and returns the payload", async () => {
    const token = await signToken("secret", "upload", { k: "uploads/u/x.mp4", s: 10 }, 60);
    expect(await verifyToken("secret", "upload", token)).toMatchObject({ k: "uploads/u/x.mp4", s: 10, p: "upload" });
  });

  it("rejects a token signed with another secret", async () => {
    const token = await signToken("other", "upload", { k: "x" }, 60);
    expect(await codeOf(verifyToken("secret", "upload", token))).toBe("SIGNATURE_INVALID");
  });

  it("rejects a token made for another purpose", async () => {
    const token = await signToken("secret", "callback", { k: "x" }, 60);
    expect(await codeOf(verifyToken("secret", "upload", token))).toBe("SIGNATURE_INVALID");
  });

  it("rejects an expired token with SIGNATURE_EXPIRED", async () => {
    const token = await signToken("secret", "upload", { k: "x" }, -1);
    expect(await codeOf(verifyToken("secret", "upload", token))).toBe("SIGNATURE_EXPIRED");
  });

  it.each(["", ".", "abc", "abc.", ".abc", "a.b.c", "!!!.???"])("rejects the malformed token %j", async (token) => {
    expect(await codeOf(verifyToken("secret", "upload", token))).toBe("SIGNATURE_INVALID");
  });

  it("refuses to sign or verify without a secret", async () => {
    expect(await codeOf(signToken("", "upload", {}, 60))).toBe("INTERNAL");
  });
});
