import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { signToken } from "../../../edge/lib/signed-token";
import { expectProblem } from "../../helpers/problems";
import { api, createUser, fakeMp4, md5Hex, pathOf, postJson } from "../helpers";

const COMMAND = "ffmpeg -i https://example.com/in.mp4 -t 2 out.mp4";
const HOUR = 3600;

/** A task of a fresh user, created through the public API, and the callback token the dispatcher would give its transcoder. */
async function newTask(): Promise<{ taskId: string; key: string; userId: string; token: string }> {
  const { key, userId } = await createUser();
  const response = await postJson("/v1/tasks", key, { command: COMMAND });
  expect(response.status).toBe(201);
  const { task_id: taskId } = await response.json<{ task_id: string }>();
  return { taskId, key, userId, token: await callbackToken(taskId, userId) };
}

/** A token as the dispatcher signs it: the task `t` and its owner `u`. */
function callbackToken(taskId: string, userId: string, ttlSeconds = HOUR, secret = env.SIGNING_SECRET): Promise<string> {
  return signToken(secret, "callback", { t: taskId, u: userId }, ttlSeconds);
}

function callback(taskId: string, token: string | undefined, body: unknown): Promise<Response> {
  return postJson(`/internal/tasks/${taskId}/events`, token, body);
}

/** An output PUT to the task's callbacks, as the transcoder stores every output. */
function putOutput(taskId: string, filename: string, token: string | undefined, body: Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  return api(`/internal/tasks/${taskId}/outputs/${filename}`, token, { method: "PUT", headers: { "content-type": "video/mp4", "content-length": String(body.byteLength), ...headers }, body });
}

async function taskOf(taskId: string, key: string): Promise<Record<string, unknown>> {
  return (await api(`/v1/tasks/${taskId}`, key)).json();
}

/**
 * Changes the first character of the signature (after the last "."), so the token no longer
 * matches its payload. Not the last one: its low bits are base64 padding that decoding drops.
 */
function forge(token: string): string {
  const at = token.lastIndexOf(".") + 1;
  return token.slice(0, at) + (token[at] === "A" ? "B" : "A") + token.slice(at + 1);
}

describe("callback authentication (/internal/tasks/{id}/*)", () => {
  it("refuses a report without a token with 401", async () => {
    const { taskId } = await newTask();
    await expectProblem(await callback(taskId, undefined, { type: "started", seq: 0 }), 401, "UNAUTHORIZED");
  });

  it("refuses a token sent with another scheme than Bearer", async () => {
    const { taskId, token } = await newTask();
    const response = await api(`/internal/tasks/${taskId}/events`, undefined, {
      method: "POST",
      headers: { authorization: `Basic ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "started", seq: 0 }),
    });
    await expectProblem(response, 401, "UNAUTHORIZED");
  });

  it("refuses a report signed for one task sent for another, and leaves the other task untouched", async () => {
    const mine = await newTask();
    const theirs = await newTask();
    await expectProblem(await callback(theirs.taskId, mine.token, { type: "failed", seq: 0, error: "forged", error_code: "FFMPEG_FAILED" }), 401, "UNAUTHORIZED");
    await expectProblem(await callback(theirs.taskId, mine.token, { type: "failed", seq: 0, error: "forged", error_code: "FFMPEG_FAILED", log: "not yours" }), 401, "UNAUTHORIZED");
    await expectProblem(await putOutput(theirs.taskId, "out.mp4", mine.token, fakeMp4(64)), 401, "UNAUTHORIZED");
    expect(await env.FILES.head(`outputs/${theirs.userId}/${theirs.taskId}/out.mp4`)).toBeNull();
    expect(await taskOf(theirs.taskId, theirs.key)).toMatchObject({ status: "pending" });
    expect((await api(`/v1/tasks/${theirs.taskId}/logs`, theirs.key)).status).toBe(404);
  });

  it("refuses a token whose signature was tampered with", async () => {
    const { taskId, token } = await newTask();
    await expectProblem(await callback(taskId, forge(token), { type: "started", seq: 0 }), 401, "UNAUTHORIZED");
  });

  it("refuses a token signed with another secret", async () => {
    const { taskId, userId } = await newTask();
    const token = await callbackToken(taskId, userId, HOUR, "not-the-signing-secret");
    await expectProblem(await callback(taskId, token, { type: "started", seq: 0 }), 401, "UNAUTHORIZED");
  });

  it("refuses an expired token", async () => {
    const { taskId, userId } = await newTask();
    const token = await callbackToken(taskId, userId, -60);
    await expectProblem(await callback(taskId, token, { type: "started", seq: 0 }), 401, "UNAUTHORIZED");
  });

  it("refuses a signed token made for another purpose (an output's receipt)", async () => {
    const { taskId, userId } = await newTask();
    const token = await signToken(env.SIGNING_SECRET, "stored", { t: taskId, u: userId }, HOUR);
    await expectProblem(await callback(taskId, token, { type: "started", seq: 0 }), 401, "UNAUTHORIZED");
  });

  it("refuses a validly signed token that names no owner, storing nothing and leaving the task untouched", async () => {
    const { taskId, key } = await newTask();
    const withoutOwner = await signToken(env.SIGNING_SECRET, "callback", { t: taskId }, HOUR);
    await expectProblem(await callback(taskId, withoutOwner, { type: "failed", seq: 0, error: "x", error_code: "FFMPEG_FAILED", log: "log" }), 401, "UNAUTHORIZED");
    await expectProblem(await putOutput(taskId, "out.mp4", withoutOwner, fakeMp4(64)), 401, "UNAUTHORIZED");
    expect(await taskOf(taskId, key)).toMatchObject({ status: "pending" });
    expect((await api(`/v1/tasks/${taskId}/logs`, key)).status).toBe(404);
  });

  it("refuses a made-up token, an API key and the transcoders' shared secret", async () => {
    const { taskId, key } = await newTask();
    for (const token of ["not-a-token", key, env.TRANSCODER_SECRET]) {
      await expectProblem(await callback(taskId, token, { type: "started", seq: 0 }), 401, "UNAUTHORIZED");
    }
  });
});

describe("POST /internal/tasks/{id}/events", () => {
  it("moves the task to running and records progress", async () => {
    const { taskId, key, token } = await newTask();
    const started = await callback(taskId, token, { type: "started", seq: 0 });
    expect(started.status).toBe(200);
    const ack = await started.json<{ ok: boolean; cancel?: boolean }>();
    expect(ack.ok).toBe(true);
    expect(ack.cancel ?? false).toBe(false);
    expect(await callback(taskId, token, { type: "progress", seq: 1, progress: 42.7, out_time_seconds: 1.2, speed: 1.5 })).toHaveProperty("status", 200);
    expect(await taskOf(taskId, key)).toMatchObject({ status: "running", progress: 42 });
  });

  it("fails the task with the reported error and code", async () => {
    const { taskId, key, token } = await newTask();
    await callback(taskId, token, { type: "started", seq: 0 });
    const failed = await callback(taskId, token, { type: "failed", seq: 1, error: "ffmpeg exited with code 1", error_code: "FFMPEG_FAILED" });
    expect(failed.status).toBe(200);
    expect(await taskOf(taskId, key)).toMatchObject({ status: "failed", error_code: "FFMPEG_FAILED", error: "ffmpeg exited with code 1" });
  });

  it("answers cancel to a report about a task that has already ended", async () => {
    const { taskId, key, token } = await newTask();
    expect((await api(`/v1/tasks/${taskId}/cancel`, key, { method: "POST" })).status).toBe(200);
    const late = await callback(taskId, token, { type: "progress", seq: 5, progress: 10 });
    expect(late.status).toBe(200);
    expect(await late.json()).toEqual({ ok: true, cancel: true });
  });

  it.each([
    ["a body that is not JSON", "{not json"],
    ["an unknown report type", { type: "exploded", seq: 0 }],
    ["progress above 100", { type: "progress", seq: 1, progress: 150 }],
    ["a negative seq", { type: "started", seq: -1 }],
    ["a completed report without outputs", { type: "completed", seq: 1, outputs: [] }],
    ["a failure code outside the catalogue", { type: "failed", seq: 1, error: "x", error_code: "NOT_A_CODE" }],
  ])("refuses %s with 400 VALIDATION_FAILED and keeps the task pending", async (_name, body) => {
    const { taskId, key, token } = await newTask();
    const response = typeof body === "string"
      ? await api(`/internal/tasks/${taskId}/events`, token, { method: "POST", headers: { "content-type": "application/json" }, body })
      : await callback(taskId, token, body);
    await expectProblem(response, 400, "VALIDATION_FAILED");
    expect(await taskOf(taskId, key)).toMatchObject({ status: "pending" });
  });
});

describe("PUT /internal/tasks/{id}/outputs/{filename}", () => {
  it("stores an output PUT with the callback token, so a completed report lists it on the CDN", async () => {
    const { taskId, key, userId, token } = await newTask();
    const bytes = fakeMp4(4096);
    const stored = await putOutput(taskId, "out.mp4", token, bytes, { "content-type": "video/mp4; codecs=avc1" });
    expect(stored.status).toBe(201);
    const answer = await stored.json<{ receipt: string }>();
    expect(answer).toEqual({ key: `outputs/${userId}/${taskId}/out.mp4`, size: bytes.byteLength, md5: await md5Hex(bytes), receipt: expect.any(String) });
    const object = await env.FILES.get(`outputs/${userId}/${taskId}/out.mp4`);
    expect(new Uint8Array(await object!.arrayBuffer())).toEqual(bytes);
    expect(object!.httpMetadata?.contentType).toBe("video/mp4");
    expect(await env.DB.prepare("SELECT kind, task_id, user_id FROM files WHERE key = ?").bind(`outputs/${userId}/${taskId}/out.mp4`).first()).toEqual({ kind: "output", task_id: taskId, user_id: userId });

    await callback(taskId, token, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size: bytes.byteLength, receipt: answer.receipt }] });
    const task = await taskOf(taskId, key);
    expect(task).toMatchObject({ status: "completed", outputs: [{ filename: "out.mp4", size: bytes.byteLength }] });
    expect((task.outputs as Record<string, unknown>[])[0]).not.toHaveProperty("receipt");
    const download = await api(pathOf((task.outputs as { url: string }[])[0]!.url), undefined);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);
  });

  it("refuses an output for a task that has already ended with 409 and keeps nothing of it", async () => {
    const { taskId, key, userId, token } = await newTask();
    await api(`/v1/tasks/${taskId}/cancel`, key, { method: "POST" });
    await expectProblem(await putOutput(taskId, "late.mp4", token, fakeMp4(64)), 409, "TASK_NOT_RUNNABLE");
    expect(await env.FILES.head(`outputs/${userId}/${taskId}/late.mp4`)).toBeNull();
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM files WHERE task_id = ?").bind(taskId).first<{ n: number }>()).toEqual({ n: 0 });
  });

  it("refuses it without a token, with a bad name, past the upload limit or with a body longer than its Content-Length, storing nothing", async () => {
    const { taskId, userId, token } = await newTask();
    const bytes = fakeMp4(64);
    await expectProblem(await putOutput(taskId, "out.mp4", undefined, bytes), 401, "UNAUTHORIZED");
    for (const name of ["..hidden.mp4", ".hidden", "my%20out.mp4"]) await expectProblem(await putOutput(taskId, name, token, bytes), 400, "OUTPUT_NOT_ALLOWED");
    await expectProblem(await putOutput(taskId, "huge.mp4", token, bytes, { "content-length": String(Number(env.MAX_UPLOAD_BYTES) + 1) }), 413, "PAYLOAD_TOO_LARGE");
    expect((await putOutput(taskId, "short.mp4", token, bytes, { "content-length": "10" })).status).toBeGreaterThanOrEqual(400);
    const listed = await env.FILES.list({ prefix: `outputs/${userId}/${taskId}/` });
    expect(listed.objects).toEqual([]);
  });
});

describe("ffmpeg's log on the terminal report", () => {
  it("stores the log of a completed report for GET /v1/tasks/{id}/logs, and the task keeps no log of its own", async () => {
    const { taskId, key, userId, token } = await newTask();
    const bytes = fakeMp4(2048);
    expect((await putOutput(taskId, "out.mp4", token, bytes)).status).toBe(201);
    const log = "frame=  10 fps=0.0\nvideo:2kB audio:0kB\n";
    expect((await callback(taskId, token, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size: bytes.byteLength }], log })).status).toBe(200);
    const task = await taskOf(taskId, key);
    expect(task).toMatchObject({ status: "completed" });
    expect(task).not.toHaveProperty("log");
    const logs = await api(`/v1/tasks/${taskId}/logs`, key);
    expect(logs.status).toBe(200);
    expect(await logs.text()).toBe(log);
    expect(await env.FILES.head(`logs/${userId}/${taskId}.log`)).not.toBeNull();
  });
});
