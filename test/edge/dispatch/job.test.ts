import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { jobFor } from "../../../edge/dispatch/job";
import { verifyToken } from "../../../edge/lib/signed-token";

const SPEC = { command: "ffmpeg -i https://example.com/in.mp4 out.mp4", with_metadata: false, webhook_url: null };

describe("the job handed to a transcoder", () => {
  it("signs the task, its run and its owner into the callback token, so callbacks read nothing from D1", async () => {
    const job = await jobFor(env, "tsk_abc", SPEC, 2, "usr_owner");
    expect(job.callback_url.endsWith("/internal/tasks/tsk_abc")).toBe(true);
    expect(await verifyToken(env.SIGNING_SECRET, "callback", job.callback_token)).toMatchObject({ t: "tsk_abc", r: 2, u: "usr_owner" });
  });

  it("is the same job with or without R2 S3 credentials: outputs have one way in, {callback_url}/outputs/<name>", async () => {
    const withCredentials: Env = { ...env, R2_ACCOUNT_ID: "0123456789abcdef0123456789abcdef", R2_ACCESS_KEY_ID: "key", R2_SECRET_ACCESS_KEY: "secret" };
    const { callback_token: _plain, ...plain } = await jobFor(env, "tsk_abc", SPEC, 0, "usr_owner");
    const { callback_token: _presignable, ...presignable } = await jobFor(withCredentials, "tsk_abc", SPEC, 0, "usr_owner");
    expect(presignable).toEqual(plain);
  });

  it("carries the largest output file the edge stores, so the transcoder stops an output at it rather than after the encode", async () => {
    expect((await jobFor({ ...env, MAX_UPLOAD_BYTES: "5000" }, "tsk_abc", SPEC, 0, "usr_owner")).max_output_file_bytes).toBe(5000);
  });
});
