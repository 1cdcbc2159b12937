import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createUser } from "../helpers";
import { expectProblem } from "../files/fixtures";

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

  it("answers 401 without a key", async () => {
    await expectProblem(await api("/v1/me", undefined), 401, "UNAUTHORIZED");
  });
});
