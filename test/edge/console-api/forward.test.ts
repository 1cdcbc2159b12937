import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../../edge/app";
import { publicPathFor } from "../../../edge/console/api/forward";
import { expectProblem } from "../../helpers/problems";
import { api, createUser, fakeMp4, multipart, postJson, productionEnv } from "../helpers";
import { ConsoleClient, ORIGIN, signedInUser } from "./client";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -c:v libx264 out.mp4";

describe("the public API under /console/api, with the session", () => {
  it("maps /console/api/v1, /upload and /files onto /v1 and /api, and nothing else", () => {
    expect(publicPathFor("/console/api/v1/tasks")).toBe("/v1/tasks");
    expect(publicPathFor("/console/api/upload/file")).toBe("/api/upload/file");
    expect(publicPathFor("/console/api/files")).toBe("/api/files");
    expect(publicPathFor("/console/api/files/uploads%2Fx")).toBe("/api/files/uploads%2Fx");
    expect(publicPathFor("/console/api/internal/tasks/x/report")).toBeUndefined();
    expect(publicPathFor("/console/api/v1")).toBeUndefined();
  });

  it("runs the same handlers for the signed-in user: me, submit, list, read, cancel", async () => {
    const { client, userId, email } = await signedInUser();
    expect(await (await client.fetch("/console/api/v1/me")).json()).toMatchObject({ user_id: userId, email });
    const created = await client.fetch("/console/api/v1/tasks", { json: { command: COMMAND } });
    expect(created.status).toBe(201);
    const { task_id } = await created.json<{ task_id: string }>();
    const list = await (await client.fetch("/console/api/v1/tasks?status=pending&limit=5")).json<{ total: number; tasks: { task_id: string }[] }>();
    expect(list.tasks.map((task) => task.task_id)).toContain(task_id);
    expect(await (await client.fetch(`/console/api/v1/tasks/${task_id}`)).json()).toMatchObject({ task_id, command: COMMAND });
    const canceled = await client.fetch(`/console/api/v1/tasks/${task_id}/cancel`, { method: "POST" });
    expect(await canceled.json()).toMatchObject({ status: "failed", error_code: "CANCELED" });
    const validation = await client.fetch("/console/api/v1/tasks/validate", { json: { command: "ffmpeg -i /etc/passwd out.mp4" } });
    expect((await expectProblem(validation, 400, "INPUT_NOT_ALLOWED")).token).toBe("/etc/passwd");
  });

  it("streams a task's events (SSE) through the session", async () => {
    const { client } = await signedInUser();
    const { task_id } = await (await client.fetch("/console/api/v1/tasks", { json: { command: COMMAND } })).json<{ task_id: string }>();
    await client.fetch(`/console/api/v1/tasks/${task_id}/cancel`, { method: "POST" });
    const events = await client.fetch(`/console/api/v1/tasks/${task_id}/events`);
    expect(events.status).toBe(200);
    expect(events.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const text = await events.text();
    expect(text).toMatch(/^event: status\ndata: .*"status":"failed"/m);
  });

  it("answers 404 for another user's task, as /v1 does", async () => {
    const other = await createUser();
    const { task_id } = await (await postJson("/v1/tasks", other.key, { command: COMMAND })).json<{ task_id: string }>();
    const { client } = await signedInUser();
    await expectProblem(await client.fetch(`/console/api/v1/tasks/${task_id}`), 404, "NOT_FOUND");
    await expectProblem(await client.fetch(`/console/api/v1/tasks/${task_id}/logs`), 404, "NOT_FOUND");
  });

  it("uploads through the session (multipart) and deletes the file again", async () => {
    const { client, userId } = await signedInUser();
    const form = multipart([{ name: "file", filename: "clip.mp4", type: "video/mp4", data: fakeMp4() }]);
    const uploaded = await client.fetch("/console/api/upload/file", { method: "POST", headers: { "content-type": form.contentType }, body: form.body });
    expect(uploaded.status).toBe(201);
    const record = await uploaded.json<{ key: string; url: string }>();
    expect(record.key).toMatch(new RegExp(`^uploads/${userId}/`));
    expect((await client.fetch(`/console/api/files/${encodeURIComponent(record.key)}`, { method: "DELETE" })).status).toBe(204);
    expect(await env.FILES.head(record.key)).toBeNull();
  });

  it("answers a tus creation with a Location under /console/api, where the upload continues", async () => {
    const { client } = await signedInUser();
    const created = await client.fetch("/console/api/upload/tus", { method: "POST", headers: { "tus-resumable": "1.0.0", "upload-length": "5" } });
    expect(created.status).toBe(201);
    const location = created.headers.get("location")!;
    expect(location).toMatch(new RegExp(`^${ORIGIN}/console/api/upload/tus/`));
    const patched = await client.fetch(new URL(location).pathname, { method: "PATCH", headers: { "tus-resumable": "1.0.0", "upload-offset": "0", "content-type": "application/offset+octet-stream" }, body: "hello" });
    expect(patched.status).toBe(204);
    expect(patched.headers.get("upload-offset")).toBe("5");
  });

  it("needs the session and its CSRF token, and ignores a Bearer key", async () => {
    const { key } = await createUser();
    await expectProblem(await new ConsoleClient().fetch("/console/api/v1/me", { headers: { authorization: `Bearer ${key}` } }), 401, "UNAUTHORIZED");
    const { client } = await signedInUser();
    await expectProblem(await client.fetch("/console/api/v1/tasks", { json: { command: COMMAND }, csrf: false }), 403, "CSRF_FAILED");
    await expectProblem(await client.fetch("/console/api/v1/tasks", { json: { command: COMMAND }, origin: "https://evil.example" }), 403, "CSRF_FAILED");
    expect((await (await client.fetch("/console/api/v1/tasks")).json<{ total: number }>()).total).toBe(0);
    await expectProblem(await client.fetch("/console/api/nothing-here"), 404, "NOT_FOUND");
  });

  it("never accepts the session cookie on /v1 itself", async () => {
    const { client } = await signedInUser();
    await expectProblem(await api("/v1/me", undefined, { headers: { cookie: `ffedge_session=${client.cookie}` } }), 401, "UNAUTHORIZED");
  });
});

describe("GET /console/api/dev/outbox", () => {
  it("does not exist in production", async () => {
    const app = buildApp();
    const ctx = createExecutionContext();
    const response = await app.fetch(new Request("https://api.ffedge.net/console/api/dev/outbox"), productionEnv(), ctx);
    await waitOnExecutionContext(ctx);
    await expectProblem(response, 404, "NOT_FOUND");
  });
});
