import { afterEach, describe, expect, it, vi } from "vitest";
import { log } from "../../../edge/lib/log";

/** Every line each console method was given, silenced, so a test can read what was logged. */
function capture() {
  const methods = { log: vi.spyOn(console, "log"), warn: vi.spyOn(console, "warn"), error: vi.spyOn(console, "error") };
  for (const spy of Object.values(methods)) spy.mockImplementation(() => {});
  const lines = (method: keyof typeof methods) => methods[method].mock.calls.map((args) => args.map(String));
  return { lines };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("log", () => {
  it("writes one JSON line per event, msg first, through the console method of its level", () => {
    const { lines } = capture();
    log.info("sweep", { deleted: 3 });
    log.warn("outbound fetch failed", { host: "example.com" });
    log.error("webhook delivery abandoned", { task_id: "t_1", attempt: 5 });
    log.info("reconciled unfinished tasks");
    expect(lines("log")).toEqual([['{"msg":"sweep","deleted":3}'], ['{"msg":"reconciled unfinished tasks"}']]);
    expect(lines("warn")).toEqual([['{"msg":"outbound fetch failed","host":"example.com"}']]);
    expect(lines("error")).toEqual([['{"msg":"webhook delivery abandoned","task_id":"t_1","attempt":5}']]);
  });

  it("writes the error field as the thrown value's name and message, whatever was thrown, in its place", () => {
    const { lines } = capture();
    class SendError extends Error {
      override name = "SendError";
    }
    log.error("mail not sent", { purpose: "verify", code: "E_INTERNAL_SERVER_ERROR", error: new SendError("send failed") });
    log.error("could not reconcile a task", { task_id: "t_2", error: "a plain string" });
    log.error("rate limiter failed; request let through", { error: new TypeError("fetch failed") });
    expect(lines("error").map(([line]) => JSON.parse(line!))).toEqual([
      { msg: "mail not sent", purpose: "verify", code: "E_INTERNAL_SERVER_ERROR", error: "SendError: send failed" },
      { msg: "could not reconcile a task", task_id: "t_2", error: "a plain string" },
      { msg: "rate limiter failed; request let through", error: "TypeError: fetch failed" },
    ]);
    expect(Object.keys(JSON.parse(lines("error")[0]![0]!))).toEqual(["msg", "purpose", "code", "error"]);
  });

  it("never throws on a field JSON cannot hold: the line keeps its msg and names the fields it left out", () => {
    const { lines } = capture();
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => log.error("dropping malformed job message", { body: cycle, size: 10n })).not.toThrow();
    expect(() => log.warn("outbound body failed", { error: Object.create(null) })).not.toThrow();
    const [malformed] = lines("error").map(([line]) => JSON.parse(line!));
    expect(malformed).toMatchObject({ msg: "dropping malformed job message", unlogged_fields: ["body", "size"] });
    expect(malformed.log_error).toMatch(/TypeError/);
    expect(JSON.parse(lines("warn")[0]![0]!)).toMatchObject({ msg: "outbound body failed", unlogged_fields: ["error"] });
  });
});
