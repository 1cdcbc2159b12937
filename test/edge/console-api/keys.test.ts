import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { expectProblem } from "../../helpers/problems";
import { api, createUser } from "../helpers";
import { signedInUser } from "./client";

describe("console API keys", () => {
  it("creates a named key shown once, which then works on the API", async () => {
    const { client, userId } = await signedInUser();
    const response = await client.fetch("/console/api/keys", { json: { name: "laptop" } });
    expect(response.status).toBe(201);
    const created = await response.json<{ id: string; name: string; prefix: string; created_at: string; key: string }>();
    expect(created).toEqual({ id: created.prefix, name: "laptop", prefix: created.key.slice(0, 12), created_at: expect.any(String), key: expect.stringMatching(/^ffe_[A-Za-z0-9_-]{43}$/) });
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await (await api("/v1/me", created.key)).json()).toMatchObject({ user_id: userId });
    const listed = await (await client.fetch("/console/api/keys")).json<{ keys: Record<string, unknown>[] }>();
    expect(listed.keys).toEqual([{ id: created.prefix, name: "laptop", prefix: created.prefix, created_at: created.created_at, last_used_at: expect.any(String), revoked_at: null }]);
    expect(JSON.stringify(listed)).not.toContain(created.key);
  });

  it("records when a key was last used, at most about once a minute", async () => {
    const { client } = await signedInUser();
    const { key, prefix } = await (await client.fetch("/console/api/keys", { json: { name: "ci" } })).json<{ key: string; prefix: string }>();
    const lastUsed = async () => (await (await client.fetch("/console/api/keys")).json<{ keys: { prefix: string; last_used_at: string | null }[] }>()).keys.find((k) => k.prefix === prefix)!.last_used_at;
    expect(await lastUsed()).toBeNull();
    await api("/v1/me", key);
    const deadline = Date.now() + 10_000;
    while (!(await lastUsed()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    const first = await lastUsed();
    expect(first).not.toBeNull();
    await api("/v1/me", key);
    await api("/v1/me", key);
    expect(await lastUsed()).toBe(first);
    await env.DB.prepare("UPDATE api_keys SET last_used_at = ? WHERE prefix = ?").bind(new Date(Date.now() - 120_000).toISOString(), prefix).run();
    await api("/v1/me", key);
    const later = Date.now() + 10_000;
    while (Date.parse((await lastUsed())!) < Date.now() - 60_000 && Date.now() < later) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(Date.parse((await lastUsed())!)).toBeGreaterThan(Date.now() - 60_000);
  });

  it("revokes a key: the API refuses it at once", async () => {
    const { client } = await signedInUser();
    const { key, id } = await (await client.fetch("/console/api/keys", { json: { name: "old" } })).json<{ key: string; id: string }>();
    expect((await client.fetch(`/console/api/keys/${id}`, { method: "DELETE" })).status).toBe(204);
    await expectProblem(await api("/v1/me", key), 401, "UNAUTHORIZED");
    const [listed] = (await (await client.fetch("/console/api/keys")).json<{ keys: { revoked_at: string | null }[] }>()).keys;
    expect(listed!.revoked_at).not.toBeNull();
    expect((await client.fetch(`/console/api/keys/${id}`, { method: "DELETE" })).status).toBe(204);
  });

  it("answers 404 for another user's key and leaves it working", async () => {
    const { client } = await signedInUser();
    const other = await createUser();
    const prefix = other.key.slice(0, 12);
    await expectProblem(await client.fetch(`/console/api/keys/${prefix}`, { method: "DELETE" }), 404, "NOT_FOUND");
    expect((await api("/v1/me", other.key)).status).toBe(200);
  });

  it("refuses a key without a name", async () => {
    const { client } = await signedInUser();
    await expectProblem(await client.fetch("/console/api/keys", { json: { name: "  " } }), 400, "VALIDATION_FAILED");
  });
});
