import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../../edge/index";
import { MAX_BASE64_BODY_BYTES } from "../../../edge/files/data-uri";
import { api, createUser } from "../helpers";
import { expectProblem } from "../../helpers/problems";

describe("GET /v1/me", () => {
  it("answers the account the key belongs to", async () => {
    const { key, userId, name } = await createUser();
    const response = await api("/v1/me", key);
    expect(response.status).toBe(200);
    const me = await response.json<Record<string, unknown>>();
    const row = await env.DB.prepare("SELECT created_at FROM users WHERE id = ?").bind(userId).first<{ created_at: string }>();
    expect(me).toMatchObject({ user_id: userId, name, email: null, created_at: row?.created_at });
  });

  it("includes the email when the account has one", async () => {
    const { key, userId } = await createUser();
    await env.DB.prepare("UPDATE users SET email = ? WHERE id = ?").bind("ada@example.com", userId).run();
    expect(await (await api("/v1/me", key)).json()).toMatchObject({ user_id: userId, email: "ada@example.com" });
  });

  it("reports remaining_credits: the processing seconds left today under DAILY_TASK_SECONDS (FFHub's whoami)", async () => {
    const { key, userId } = await createUser();
    await env.DB.prepare("UPDATE users SET email = ? WHERE id = ?").bind(`${userId}@example.com`, userId).run();
    expect(await (await api("/v1/me", key)).json()).toMatchObject({ user_id: userId, email: `${userId}@example.com`, remaining_credits: 36_000 });
    const now = Date.now();
    await env.DB.prepare("INSERT INTO tasks (id, user_id, command, status, created_at, started_at, finished_at) VALUES (?, ?, 'x', 'completed', ?, ?, ?)")
      .bind(`tsk_me${now}`, userId, new Date(now - 1_000).toISOString(), new Date(now - 215_300).toISOString(), new Date(now).toISOString())
      .run();
    const me = await (await api("/v1/me", key)).json<{ remaining_credits: number; usage: { seconds_processed_today: number } }>();
    expect(me.usage.seconds_processed_today).toBeCloseTo(215.3, 1);
    expect(me.remaining_credits).toBeCloseTo(36_000 - 215.3, 1);
  });

  it("reports the upload limits: the file limit, the request body limit (unset: the file limit plus a multipart envelope) and the base64 cap", async () => {
    const { key } = await createUser();
    const me = await (await api("/v1/me", key)).json<Record<string, unknown>>();
    expect(me.limits).toEqual({
      max_upload_bytes: Number(env.MAX_UPLOAD_BYTES),
      max_request_body_bytes: Number(env.MAX_UPLOAD_BYTES) + 64 * 1024,
      max_base64_body_bytes: MAX_BASE64_BODY_BYTES,
    });
  });

  it("reports MAX_REQUEST_BODY_BYTES as set for production (Free/Pro: 100 MB), and a base64 cap never above it", async () => {
    const { key } = await createUser();
    const read = async (limit: number) => {
      const ctx = createExecutionContext();
      const response = await worker.fetch(new Request("http://localhost:8787/v1/me", { headers: { authorization: `Bearer ${key}` } }), { ...env, MAX_REQUEST_BODY_BYTES: String(limit) } as Env, ctx);
      await waitOnExecutionContext(ctx);
      return (await response.json<{ limits: Record<string, number> }>()).limits;
    };
    expect(await read(104_857_600)).toEqual({ max_upload_bytes: Number(env.MAX_UPLOAD_BYTES), max_request_body_bytes: 104_857_600, max_base64_body_bytes: MAX_BASE64_BODY_BYTES });
    expect((await read(1_000_000)).max_base64_body_bytes).toBe(1_000_000);
  });

  it("keeps FFHub's fields next to the new ones", async () => {
    const { key, userId } = await createUser();
    const me = await (await api("/v1/me", key)).json<Record<string, unknown>>();
    expect(me).toMatchObject({ user_id: userId, email: null, remaining_credits: expect.any(Number) });
  });

  it("answers 401 without a key", async () => {
    await expectProblem(await api("/v1/me", undefined), 401, "UNAUTHORIZED");
  });
});
