import { describe, expect, it } from "vitest";
import { countdown, formatBytes, formatDuration, shownStatus } from "../../../../edge/console/client/format";

describe("the console's formatting", () => {
  it.each([
    [0, "0 B"],
    [1023, "1023 B"],
    [1024, "1 KiB"],
    [1536, "1.5 KiB"],
    [10 * 1024 - 1, "10 KiB"],
    [150 * 1024, "150 KiB"],
    [1024 ** 2, "1 MiB"],
    [5.25 * 1024 ** 3, "5.3 GiB"],
    [3 * 1024 ** 5, "3072 TiB"],
  ])("writes %d bytes as %s", (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  it.each([
    [0, "0 s"],
    [-3, "0 s"],
    [59.6, "1 min"],
    [61, "1 min 1 s"],
    [3600, "1 h"],
    [3660, "1 h 1 min"],
    [3601, "1 h"],
  ])("writes %d seconds as %s", (seconds, text) => {
    expect(formatDuration(seconds)).toBe(text);
  });

  it("counts down to an expiry, then says it has expired", () => {
    expect(countdown(new Date(Date.now() + 90_500).toISOString())).toMatch(/^1 min 3[01] s$/);
    expect(countdown(new Date(Date.now() - 1000).toISOString())).toBe("expired");
  });

  it("shows a canceled task as canceled although its status stays failed", () => {
    expect(shownStatus({ status: "failed", error_code: "CANCELED" })).toBe("canceled");
    expect(shownStatus({ status: "failed", canceled_at: "2026-11-26T00:00:00Z" })).toBe("canceled");
    expect(shownStatus({ status: "failed", error_code: "TIMEOUT" })).toBe("failed");
    expect(shownStatus({ status: "running" })).toBe("running");
  });
});
