import { describe, expect, it } from "vitest";
import { outcomeOf } from "../../../edge/dispatch/backend";

const answer = (status: number, body = "") => new Response(body || null, { status });

describe("a transcoder's answer to a job", () => {
  it("is an acceptance only when it is 202", async () => {
    expect(await outcomeOf(answer(202, '{"accepted":true}'), "http://t1")).toEqual({ kind: "accepted", target: "http://t1" });
  });

  it("is never an acceptance when it is a 409 refusal: that run already ran there, so it is stale", async () => {
    const outcome = await outcomeOf(answer(409, '{"code":"TASK_NOT_RUNNABLE"}'), "http://t1");
    expect(outcome).toMatchObject({ kind: "stale", detail: expect.stringContaining("TASK_NOT_RUNNABLE") });
  });

  it("is 'not now' for a transcoder short of work space (503), saying why: the task waits, it is neither lost nor failed", async () => {
    const problem = JSON.stringify({ status: 503, code: "TRANSCODER_BUSY", detail: "Short of work space: WORK_ROOT has 524288 bytes free, below MIN_FREE_WORK_BYTES (1048576)." });
    expect(await outcomeOf(answer(503, problem), "http://t1")).toEqual({ kind: "busy", detail: expect.stringContaining("Short of work space") });
  });

  it("is capacity for 429 and 503, a fault for other 5xx and a refusal for other 4xx", async () => {
    expect((await outcomeOf(answer(503), "http://t1")).kind).toBe("busy");
    expect((await outcomeOf(answer(429), "http://t1")).kind).toBe("busy");
    expect((await outcomeOf(answer(500), "http://t1")).kind).toBe("unreachable");
    expect((await outcomeOf(answer(400), "http://t1")).kind).toBe("rejected");
  });
});
