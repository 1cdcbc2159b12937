import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import worker from "../../../edge/index";
import { fetchInput } from "../../../edge/dispatch/transcoder-container";
import { guardedFetch } from "../../../edge/lib/guarded-fetch";
import { sendEvent } from "../../../edge/webhooks/delivery";
import { EGRESS_REFUSED_HEADER } from "../../../shared/egress";
import { AppError } from "../../../shared/errors";
import { createUser } from "../helpers";
import { originUrl, storedFor } from "../files/fixtures";
import { expectProblem } from "../../helpers/problems";
import { originPaths } from "../files/origin";

/** A name under .invalid never resolves (RFC 6761); allow-listed here so that DNS itself is what fails. */
const UNRESOLVABLE = "no-such-host.invalid";
const withUnresolvable: Env = { ...env, DEV_FETCH_ALLOW_HOSTS: `127.0.0.1,${UNRESOLVABLE}` };
/** workerd's own words for a failed fetch, which must never reach a caller. */
const RUNTIME_WORDS = /internal error|reference =|Network connection lost|jsg|kj::/i;

const FAILURES = [
  ["a refused connection (nothing listens on the port)", "http://127.0.0.1:1/clip.mp4", "Could not connect to 127.0.0.1:1: the connection was refused or closed before an answer."],
  ["a name that does not resolve", `http://${UNRESOLVABLE}/clip.mp4`, `Could not connect to ${UNRESOLVABLE}: the name does not resolve.`],
  ["a failed TLS handshake (https to a plain-HTTP server)", "https://127.0.0.1:ORIGIN/file/10", "Could not connect to 127.0.0.1:ORIGIN: the TLS handshake failed (certificate or protocol not accepted)."],
] as const;

function withOrigin(text: string): string {
  return text.replaceAll("ORIGIN", String(inject("originPort")));
}

async function rejection(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(() => undefined, (reason: unknown) => reason);
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

/** POST /api/upload/url through the whole Worker, with `.invalid` allow-listed. */
async function urlUpload(apiKey: string, url: string): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request("http://localhost:8787/api/upload/url", {
    method: "POST", headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, body: JSON.stringify({ url }),
  }), withUnresolvable, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

describe("guardedFetch names why a connection failed, in its own words", () => {
  it.each(FAILURES)("%s is URL_UNREACHABLE (502) with the cause", async (_, url, detail) => {
    const error = await rejection(guardedFetch(withUnresolvable, withOrigin(url)));
    expect({ code: error.code, status: error.status, detail: error.detail }).toEqual({ code: "URL_UNREACHABLE", status: 502, detail: withOrigin(detail) });
    expect(error.detail).not.toMatch(RUNTIME_WORDS);
  });

  it("names a body that breaks off mid-download, with the bytes that arrived", async () => {
    const url = originUrl(originPaths.declared(100_000));
    const { response } = await guardedFetch(env, url, { idleTimeoutMs: 10_000 });
    expect(response.status).toBe(200);
    const error = await rejection(response.arrayBuffer());
    expect(error.code).toBe("URL_UNREACHABLE");
    expect(error.detail).toBe(`The connection to ${new URL(url).host} broke after 1024 bytes of the download.`);
  });
});

describe("POST /api/upload/url from a URL that cannot be reached", () => {
  it.each([...FAILURES, ["a connection reset mid-body", originPaths.declared(100_000), "The connection to 127.0.0.1:ORIGIN broke after 1024 bytes of the download."] as const])(
    "answers 502 URL_UNREACHABLE to %s, titled and worded by us, and stores nothing",
    async (_, url, detail) => {
      const { key, userId } = await createUser();
      const response = await urlUpload(key, url.startsWith("/") ? originUrl(url) : withOrigin(url));
      const problem = await expectProblem(response, 502, "URL_UNREACHABLE");
      expect(problem).toMatchObject({ title: "URL unreachable", detail: withOrigin(detail) });
      expect(JSON.stringify(problem)).not.toMatch(RUNTIME_WORDS);
      expect(await storedFor(userId)).toEqual({ objects: [], rows: [] });
    },
  );
});

describe("the Worker's other fetches for a user", () => {
  it("records a webhook delivery to an unreachable receiver in our words", async () => {
    const event = { id: "msg_t_failed", type: "task.failed" as const, body: "{}" };
    for (const [, url] of FAILURES) {
      const outcome = await sendEvent(withUnresolvable, withOrigin(url), event, async () => ["whsec_test"]);
      expect(outcome).toMatchObject({ success: false, statusCode: null, refused: false, error: expect.stringMatching(/^URL_UNREACHABLE: Could not connect to /) });
      expect(outcome.error).not.toMatch(RUNTIME_WORDS);
    }
  });

  it("answers a transcoder's input download that cannot connect with our problem, which becomes the task's error", async () => {
    for (const [, url, detail] of FAILURES) {
      const response = await fetchInput(new Request(withOrigin(url)), withUnresolvable);
      const problem = await expectProblem(response, 502, "URL_UNREACHABLE");
      expect(problem.detail).toBe(withOrigin(detail));
      expect(response.headers.get(EGRESS_REFUSED_HEADER)).toBe("URL_UNREACHABLE");
    }
  });
});
