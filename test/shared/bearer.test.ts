import { describe, expect, it } from "vitest";
import { bearerToken } from "../../shared/bearer";

describe("bearerToken", () => {
  it("returns the token of a Bearer header", () => {
    expect(bearerToken("Bearer ffe_abc.def-_")).toBe("ffe_abc.def-_");
  });

  it("reads the scheme case-insensitively and allows several spaces after it", () => {
    expect(bearerToken("bearer abc")).toBe("abc");
    expect(bearerToken("BEARER   abc")).toBe("abc");
  });

  it.each([
    ["no header", undefined],
    ["a null header", null],
    ["an empty header", ""],
    ["the scheme alone", "Bearer"],
    ["the scheme and a space", "Bearer "],
    ["another scheme", "Basic YWxpY2U6c2VjcmV0"],
    ["a token without a scheme", "ffe_abc"],
    ["two tokens", "Bearer abc def"],
    ["a trailing space", "Bearer abc "],
    ["a leading space", " Bearer abc"],
    ["a tab instead of a space", "Bearer\tabc"],
    ["a scheme that only starts with Bearer", "Bearerabc"],
  ])("returns undefined for %s", (_name, header) => {
    expect(bearerToken(header)).toBeUndefined();
  });
});
