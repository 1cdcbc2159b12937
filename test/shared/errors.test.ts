import { describe, expect, it } from "vitest";
import { AppError, ERROR_STATUS, ERROR_TITLES, type ErrorCode, problemBody } from "../../shared/errors";

const CODES = Object.keys(ERROR_STATUS) as ErrorCode[];

/** Acronyms and names as a code's words would read if capitalised mechanically ("Url unreachable"). */
const MISSPELT = /\b(Url|Urls|Uri|Http|Https|Id|Ids|Md5|Json|Api|Csrf|Ffmpeg|Tus|Tls|Dns)\b/;

describe("the error catalogue's titles", () => {
  it("gives every code its own written title and titles no code that does not exist", () => {
    expect(Object.keys(ERROR_TITLES).sort()).toEqual([...CODES].sort());
    for (const code of CODES) expect(ERROR_TITLES[code], code).toMatch(/^[A-Z]\S/);
  });

  it.each(CODES)("spells acronyms in %s's title as such", (code) => {
    expect(ERROR_TITLES[code]).not.toMatch(MISSPELT);
  });

  it("puts the written title on the wire, not one made from the code", () => {
    for (const code of CODES) {
      const body = problemBody(new AppError(code, "detail"));
      expect(body, code).toMatchObject({ title: ERROR_TITLES[code], status: ERROR_STATUS[code], code });
    }
    expect(problemBody(new AppError("URL_UNREACHABLE", "x")).title).toBe("URL unreachable");
    expect(problemBody(new AppError("URL_HOST_BLOCKED", "x")).title).toBe("URL host blocked");
    expect(problemBody(new AppError("INVALID_JSON", "x")).title).toBe("Invalid JSON");
  });
});
