import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { taskStub } from "../../../edge/lib/stubs";
import { expectProblem } from "../../helpers/problems";
import { api, fakeMp4, postJson, uploadFile } from "../helpers";
import { ConsoleClient, PASSWORD, signedInUser, waitForLink } from "./client";

describe("POST /console/api/account/password", () => {
  it("changes the password, replaces this session's cookie and ends every other session", async () => {
    const { client, email } = await signedInUser();
    const elsewhere = new ConsoleClient();
    await elsewhere.signIn(email);
    const before = client.cookie;
    const response = await client.fetch("/console/api/account/password", { json: { current_password: PASSWORD, new_password: "a better password" } });
    expect(response.status).toBe(204);
    expect(client.cookie).toBeDefined();
    expect(client.cookie).not.toBe(before);
    const session = await client.fetch("/console/api/session");
    expect(session.status).toBe(200);
    expect((await session.json<{ csrf_token: string }>()).csrf_token).not.toBe(client.csrfToken);
    await expectProblem(await elsewhere.fetch("/console/api/session"), 401, "UNAUTHORIZED");
    await expectProblem(await new ConsoleClient().signIn(email), 401, "INVALID_CREDENTIALS");
    expect((await new ConsoleClient().signIn(email, "a better password")).status).toBe(200);
  });

  it("refuses a wrong current password and a too short new one", async () => {
    const { client } = await signedInUser();
    await expectProblem(await client.fetch("/console/api/account/password", { json: { current_password: "not my password", new_password: "a better password" } }), 401, "INVALID_CREDENTIALS");
    await expectProblem(await client.fetch("/console/api/account/password", { json: { current_password: PASSWORD, new_password: "short" } }), 400, "VALIDATION_FAILED");
    expect((await client.fetch("/console/api/session")).status).toBe(200);
  });
});

/** Every D1 table that has a user_id column, so a table added later cannot be forgotten (D1 refuses pragma_table_info; the CREATE text names the columns). */
async function tablesWithUserId(): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table'").all<{ name: string; sql: string }>();
  return results.filter((row) => /\buser_id\b/.test(row.sql)).map((row) => row.name);
}

async function r2Keys(userId: string): Promise<string[]> {
  const keys: string[] = [];
  for (const prefix of [`uploads/${userId}/`, `outputs/${userId}/`, `logs/${userId}/`]) keys.push(...(await env.FILES.list({ prefix })).objects.map((object) => object.key));
  return keys;
}

describe("DELETE /console/api/account", () => {
  it("removes the account's keys, tasks, outputs, logs, files, uploads, secrets and sessions: nothing is left", async () => {
    const { client, email, userId } = await signedInUser();
    const { key } = await (await client.fetch("/console/api/keys", { json: { name: "ci" } })).json<{ key: string }>();
    expect((await uploadFile(key, fakeMp4())).status).toBe(201);
    expect((await api("/api/upload/tus", key, { method: "POST", headers: { "tus-resumable": "1.0.0", "upload-length": "10" } })).status).toBe(201);
    const submitted = await api("/v1/tasks", key, { method: "POST", headers: { "content-type": "application/json", "idempotency-key": "delete-me" }, body: JSON.stringify({ command: "ffmpeg -i https://example.com/in.mp4 out.mp4" }) });
    const { task_id } = await submitted.json<{ task_id: string }>();
    await env.FILES.put(`outputs/${userId}/${task_id}/out.mp4`, "abc");
    await env.FILES.put(`logs/${userId}/${task_id}.log`, "log");
    const stub = taskStub(env, task_id);
    await stub.report({ type: "started", seq: 100 });
    await stub.report({ type: "completed", seq: 101, outputs: [{ filename: "out.mp4", size: 3 }] });
    const running = (await (await postJson("/v1/tasks", key, { command: "ffmpeg -i https://example.com/in.mp4 out.mp4" })).json<{ task_id: string }>()).task_id;
    await taskStub(env, running).report({ type: "started", seq: 100 });
    expect((await postJson("/v1/webhook-secret/rotate", key, {})).status).toBe(200);
    await env.DB.prepare("INSERT INTO webhook_deliveries (webhook_id, task_id, user_id, attempt, url, attempted_at, success) VALUES ('w', ?, ?, 1, 'https://example.com/hook', ?, 1)").bind(task_id, userId, new Date().toISOString()).run();
    await client.fetch("/console/api/auth/forgot", { json: { email } });
    await waitForLink(email, "reset");

    const counts = async () => Object.fromEntries(await Promise.all((await tablesWithUserId()).map(async (table) => [table, (await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE user_id = ?`).bind(userId).first<{ n: number }>())!.n] as const)));
    const before = await counts();
    for (const table of ["api_keys", "files", "tasks", "tus_uploads", "idempotency_keys", "webhook_secrets", "webhook_deliveries", "sessions"]) expect(before[table], table).toBeGreaterThan(0);
    expect((await r2Keys(userId)).length).toBeGreaterThanOrEqual(3);

    await expectProblem(await client.fetch("/console/api/account", { method: "DELETE", json: { password: "not my password" } }), 401, "INVALID_CREDENTIALS");
    const response = await client.fetch("/console/api/account", { method: "DELETE", json: { password: PASSWORD } });
    expect(response.status).toBe(204);

    expect(Object.values(await counts()).every((n) => n === 0), JSON.stringify(await counts())).toBe(true);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM users WHERE id = ?").bind(userId).first("n")).toBe(0);
    expect(await r2Keys(userId)).toEqual([]);
    expect(await taskStub(env, task_id).getState()).toBeUndefined();
    expect(await taskStub(env, running).getState()).toBeUndefined();
    await expectProblem(await api("/v1/me", key), 401, "UNAUTHORIZED");
    await expectProblem(await client.fetch("/console/api/session"), 401, "UNAUTHORIZED");
    await expectProblem(await new ConsoleClient().signIn(email), 401, "INVALID_CREDENTIALS");
  });
});
