import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sweepIdempotencyKeys } from "../../../edge/lib/idempotency";
import { api, createUser, fakeMp4, multipart } from "../helpers";
import { originUrl } from "../files/fixtures";
import { expectProblem } from "../../helpers/problems";
import { originPaths } from "../files/origin";
import { heldBody } from "../files/tus/tus-client";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -c:v libx264 -t 2 out.mp4";

function post(path: string, key: string, body: unknown, idempotencyKey: string): Promise<Response> {
  return api(path, key, { method: "POST", headers: { "content-type": "application/json", "idempotency-key": idempotencyKey }, body: JSON.stringify(body) });
}

async function count(table: "tasks" | "files", userId: string): Promise<number> {
  return (await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE user_id = ?`).bind(userId).first<number>("n")) ?? 0;
}

async function keyRow(userId: string, key: string): Promise<{ status: number | null; expires_at: string } | null> {
  return env.DB.prepare("SELECT status, expires_at FROM idempotency_keys WHERE user_id = ? AND key = ?").bind(userId, key).first();
}

function uploadForm(data: Uint8Array): { body: Uint8Array; contentType: string } {
  return multipart([{ name: "file", filename: "clip.mp4", type: "video/mp4", data }]);
}

describe("Idempotency-Key on POST /v1/tasks", () => {
  it("answers a retry with the same body with the original response and creates no second task", async () => {
    const { key, userId } = await createUser();
    const first = await post("/v1/tasks", key, { command: COMMAND }, "retry-1");
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const original = await first.json<{ task_id: string }>();
    const retry = await post("/v1/tasks", key, { command: COMMAND }, "retry-1");
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await retry.json()).toEqual(original);
    expect(await count("tasks", userId)).toBe(1);
  });

  it("answers 409 IDEMPOTENCY_KEY_REUSED to the same key with a different body", async () => {
    const { key, userId } = await createUser();
    expect((await post("/v1/tasks", key, { command: COMMAND }, "reused")).status).toBe(201);
    await expectProblem(await post("/v1/tasks", key, { command: `${COMMAND} -y` }, "reused"), 409, "IDEMPOTENCY_KEY_REUSED");
    expect(await count("tasks", userId)).toBe(1);
  });

  it("creates one task for two concurrent requests with one key; both get its id", async () => {
    const { key, userId } = await createUser();
    const [a, b] = await Promise.all([post("/v1/tasks", key, { command: COMMAND }, "race"), post("/v1/tasks", key, { command: COMMAND }, "race")]);
    expect([a.status, b.status]).toEqual([201, 201]);
    const [bodyA, bodyB] = await Promise.all([a.json<{ task_id: string }>(), b.json<{ task_id: string }>()]);
    expect(bodyA.task_id).toBe(bodyB.task_id);
    expect([a.headers.get("idempotent-replayed"), b.headers.get("idempotent-replayed")].filter(Boolean)).toEqual(["true"]);
    expect(await count("tasks", userId)).toBe(1);
  });

  it("keeps keys per user: the same key from two users makes two tasks", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const a = await (await post("/v1/tasks", alice.key, { command: COMMAND }, "shared-key")).json<{ task_id: string }>();
    const b = await (await post("/v1/tasks", bob.key, { command: COMMAND }, "shared-key")).json<{ task_id: string }>();
    expect(a.task_id).not.toBe(b.task_id);
    expect([await count("tasks", alice.userId), await count("tasks", bob.userId)]).toEqual([1, 1]);
  });

  it("remembers a refused request too: the retry gets the same 400, replayed", async () => {
    const { key } = await createUser();
    const body = { command: "ffmpeg -i https://example.com/in.mp4 ../escape.mp4" };
    const first = await post("/v1/tasks", key, body, "bad-command");
    const problem = await expectProblem(first, 400, (await first.clone().json<{ code: string }>()).code);
    const retry = await post("/v1/tasks", key, body, "bad-command");
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await expectProblem(retry, 400, problem.code as string)).toEqual(problem);
  });

  it("treats the same key on another endpoint as a different request", async () => {
    const { key } = await createUser();
    expect((await post("/v1/tasks", key, { command: COMMAND }, "one-key")).status).toBe(201);
    await expectProblem(await post("/v1/uploads/sign", key, { filename: "a.mp4", size: 10, content_type: "video/mp4" }, "one-key"), 409, "IDEMPOTENCY_KEY_REUSED");
  });

  it("accepts the key as a quoted structured-field string and refuses malformed keys with 400", async () => {
    const { key, userId } = await createUser();
    expect((await post("/v1/tasks", key, { command: COMMAND }, "\"quoted-1\"")).status).toBe(201);
    expect((await post("/v1/tasks", key, { command: COMMAND }, "quoted-1")).headers.get("idempotent-replayed")).toBe("true");
    for (const bad of ["", "x".repeat(256), "has space", "\"\""]) {
      await expectProblem(await post("/v1/tasks", key, { command: COMMAND }, bad), 400, "INVALID_IDEMPOTENCY_KEY");
    }
    expect(await count("tasks", userId)).toBe(1);
  });

  it("ignores the header on GET", async () => {
    const { key } = await createUser();
    const response = await api("/v1/tasks", key, { headers: { "idempotency-key": "read" } });
    expect(response.status).toBe(200);
    expect(response.headers.get("idempotent-replayed")).toBeNull();
  });

  it("runs the request anew once the key's 24 h have passed, and the sweep deletes expired keys", async () => {
    const { key, userId } = await createUser();
    expect((await post("/v1/tasks", key, { command: COMMAND }, "old")).status).toBe(201);
    await env.DB.prepare("UPDATE idempotency_keys SET expires_at = ? WHERE user_id = ?").bind(new Date(Date.now() - 1000).toISOString(), userId).run();
    const again = await post("/v1/tasks", key, { command: COMMAND }, "old");
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect(await count("tasks", userId)).toBe(2);
    await env.DB.prepare("UPDATE idempotency_keys SET expires_at = ? WHERE user_id = ?").bind(new Date(Date.now() - 1000).toISOString(), userId).run();
    expect(await sweepIdempotencyKeys(env)).toBeGreaterThanOrEqual(1);
    expect(await keyRow(userId, "old")).toBeNull();
  });
});

describe("Idempotency-Key on the upload endpoints", () => {
  it("stores a base64 upload once and replays its record", async () => {
    const { key, userId } = await createUser();
    const body = { data: `data:text/plain;base64,${btoa("hello idempotency")}` };
    const first = await post("/api/upload/base64", key, body, "b64");
    expect(first.status).toBe(201);
    const retry = await post("/api/upload/base64", key, body, "b64");
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.json()).toEqual(await first.json());
    expect(await count("files", userId)).toBe(1);
  });

  it("stores a URL upload once and replays its record", async () => {
    const { key, userId } = await createUser();
    const body = { url: originUrl(originPaths.file(5000)) };
    const first = await post("/api/upload/url", key, body, "by-url");
    expect(first.status).toBe(201);
    const retry = await post("/api/upload/url", key, body, "by-url");
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.json()).toEqual(await first.json());
    expect(await count("files", userId)).toBe(1);
  });

  it("frees the key when the request fails with a 5xx, so a retry runs again", async () => {
    const { key, userId } = await createUser();
    const body = { url: originUrl(originPaths.status(500)) };
    await expectProblem(await post("/api/upload/url", key, body, "flaky"), 502, "URL_REMOTE_STATUS");
    expect(await keyRow(userId, "flaky")).toBeNull();
    const retry = await post("/api/upload/url", key, body, "flaky");
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    await expectProblem(retry, 502, "URL_REMOTE_STATUS");
  });

  it("signs once: a retry gets the same upload URL and key", async () => {
    const { key, userId } = await createUser();
    const body = { filename: "big.mp4", size: 1234, content_type: "video/mp4" };
    const first = await (await post("/v1/uploads/sign", key, body, "sign-1")).json<{ key: string; upload_url: string }>();
    const retry = await post("/v1/uploads/sign", key, body, "sign-1");
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.json()).toEqual(first);
    expect(await keyRow(userId, "sign-1")).toMatchObject({ status: 200 });
  });

  it("fingerprints a multipart upload by its file, not its boundary: the same file again is replayed, another file is refused", async () => {
    const { key, userId } = await createUser();
    const data = fakeMp4(50_000);
    const send = (form: { body: Uint8Array; contentType: string }) =>
      api("/api/upload/file", key, { method: "POST", headers: { "content-type": form.contentType, "idempotency-key": "file-1" }, body: form.body });
    const first = await send(uploadForm(data));
    expect(first.status).toBe(201);
    const retry = await send(uploadForm(data));
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBe("true");
    expect(await retry.json()).toEqual(await first.json());
    const changed = data.slice();
    changed[40_000] = 0xff - changed[40_000]!;
    await expectProblem(await send(uploadForm(changed)), 409, "IDEMPOTENCY_KEY_REUSED");
    expect(await count("files", userId)).toBe(1);
  });

  it("makes a duplicate that arrives mid-upload wait for the first and answer its record", async () => {
    const { key, userId } = await createUser();
    const form = uploadForm(fakeMp4(200_000));
    const held = heldBody();
    const first = api("/api/upload/file", key, { method: "POST", headers: { "content-type": form.contentType, "idempotency-key": "slow" }, body: held.body });
    held.send(form.body.slice(0, 1000));
    for (let i = 0; i < 200 && (await keyRow(userId, "slow")) === null; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await keyRow(userId, "slow")).toMatchObject({ status: null });
    const duplicate = api("/api/upload/file", key, { method: "POST", headers: { "content-type": form.contentType, "idempotency-key": "slow" }, body: form.body });
    held.send(form.body.slice(1000));
    held.end();
    const [a, b] = await Promise.all([first, duplicate]);
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers.get("idempotent-replayed")).toBe("true");
    expect(await b.json()).toEqual(await a.json());
    expect(await count("files", userId)).toBe(1);
  });

  it("answers 409 IDEMPOTENCY_KEY_IN_PROGRESS with Retry-After when the first request runs too long", async () => {
    const { key, userId } = await createUser();
    const form = uploadForm(fakeMp4(10_000));
    const held = heldBody();
    const first = api("/api/upload/file", key, { method: "POST", headers: { "content-type": form.contentType, "idempotency-key": "stuck" }, body: held.body });
    held.send(form.body.slice(0, 500));
    for (let i = 0; i < 200 && (await keyRow(userId, "stuck")) === null; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const duplicate = await api("/api/upload/file", key, { method: "POST", headers: { "content-type": form.contentType, "idempotency-key": "stuck" }, body: form.body });
    expect(duplicate.headers.get("retry-after")).toBe("1");
    await expectProblem(duplicate, 409, "IDEMPOTENCY_KEY_IN_PROGRESS");
    held.send(form.body.slice(500));
    held.end();
    expect((await first).status).toBe(201);
    expect(await count("files", userId)).toBe(1);
  }, 30_000);
});
