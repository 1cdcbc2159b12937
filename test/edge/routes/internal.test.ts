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
  return { taskId, key, userId, token: await callbackToken(taskId, HOUR, env.SIGNING_SECRET, userId) };
}

/** A token as the dispatcher signs it (with the owner `u`), or without `u` as tokens signed before owners went into them. */
function callbackToken(taskId: string, ttlSeconds = HOUR, secret = env.SIGNING_SECRET, userId?: string): Promise<string> {
  return signToken(secret, "callback", { t: taskId, ...(userId ? { u: userId } : {}) }, ttlSeconds);
}

function callback(taskId: string, what: "events" | "outputs", token: string | undefined, body: unknown): Promise<Response> {
  return postJson(`/internal/tasks/${taskId}/${what}`, token, body);
}


/** An output PUT straight to the task's callbacks (jobs with `outputs_direct`). */
function putOutput(taskId: string, filename: string, token: string | undefined, body: Uint8Array, headers: Record<string, string> = {}): Promise<Response> {
  return api(`/internal/tasks/${taskId}/outputs/${filename}`, token, { method: "PUT", headers: { "content-type": "video/mp4", "content-length": String(body.byteLength), ...headers }, body });
}

function putObject(uploadUrl: string, body: Uint8Array, contentLength = body.byteLength): Promise<Response> {
  return api(pathOf(uploadUrl), undefined, { method: "PUT", headers: { "content-length": String(contentLength) }, body });
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
    await expectProblem(await callback(taskId, "events", undefined, { type: "started", seq: 0 }), 401, "UNAUTHORIZED");
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
    await expectProblem(await callback(theirs.taskId, "events", mine.token, { type: "failed", seq: 0, error: "forged", error_code: "FFMPEG_FAILED" }), 401, "UNAUTHORIZED");
    await expectProblem(await callback(theirs.taskId, "outputs", mine.token, { filename: "out.mp4", size: 3, content_type: "video/mp4" }), 401, "UNAUTHORIZED");
    await expectProblem(await callback(theirs.taskId, "events", mine.token, { type: "failed", seq: 0, error: "forged", error_code: "FFMPEG_FAILED", log: "not yours" }), 401, "UNAUTHORIZED");
    await expectProblem(await putOutput(theirs.taskId, "out.mp4", mine.token, fakeMp4(64)), 401, "UNAUTHORIZED");
    expect(await env.FILES.head(`outputs/${theirs.userId}/${theirs.taskId}/out.mp4`)).toBeNull();
    expect(await taskOf(theirs.taskId, theirs.key)).toMatchObject({ status: "pending" });
    expect((await api(`/v1/tasks/${theirs.taskId}/logs`, theirs.key)).status).toBe(404);
  });

  it("refuses a token whose signature was tampered with", async () => {
    const { taskId, token } = await newTask();
    await expectProblem(await callback(taskId, "events", forge(token), { type: "started", seq: 0 }), 401, "UNAUTHORIZED");
  });

  it("refuses a token signed with another secret", async () => {
    const { taskId } = await newTask();
    const token = await callbackToken(taskId, HOUR, "not-the-signing-secret");
    await expectProblem(await callback(taskId, "events", token, { type: "started", seq: 0 }), 401, "UNAUTHORIZED");
  });

  it("refuses an expired token", async () => {
    const { taskId } = await newTask();
    const token = await callbackToken(taskId, -60);
    await expectProblem(await callback(taskId, "events", token, { type: "started", seq: 0 }), 401, "UNAUTHORIZED");
  });

  it("refuses a signed token made for another purpose (an output upload grant)", async () => {
    const { taskId } = await newTask();
    const token = await signToken(env.SIGNING_SECRET, "output", { t: taskId }, HOUR);
    await expectProblem(await callback(taskId, "events", token, { type: "started", seq: 0 }), 401, "UNAUTHORIZED");
  });

  it("refuses a made-up token, an API key and the transcoders' shared secret", async () => {
    const { taskId, key } = await newTask();
    for (const token of ["not-a-token", key, env.TRANSCODER_SECRET]) {
      await expectProblem(await callback(taskId, "events", token, { type: "started", seq: 0 }), 401, "UNAUTHORIZED");
    }
  });
});

describe("POST /internal/tasks/{id}/events", () => {
  it("moves the task to running and records progress", async () => {
    const { taskId, key, token } = await newTask();
    const started = await callback(taskId, "events", token, { type: "started", seq: 0 });
    expect(started.status).toBe(200);
    const ack = await started.json<{ ok: boolean; cancel?: boolean }>();
    expect(ack.ok).toBe(true);
    expect(ack.cancel ?? false).toBe(false);
    expect(await callback(taskId, "events", token, { type: "progress", seq: 1, progress: 42.7, out_time_seconds: 1.2, speed: 1.5 })).toHaveProperty("status", 200);
    expect(await taskOf(taskId, key)).toMatchObject({ status: "running", progress: 42 });
  });

  it("fails the task with the reported error and code", async () => {
    const { taskId, key, token } = await newTask();
    await callback(taskId, "events", token, { type: "started", seq: 0 });
    const failed = await callback(taskId, "events", token, { type: "failed", seq: 1, error: "ffmpeg exited with code 1", error_code: "FFMPEG_FAILED" });
    expect(failed.status).toBe(200);
    expect(await taskOf(taskId, key)).toMatchObject({ status: "failed", error_code: "FFMPEG_FAILED", error: "ffmpeg exited with code 1" });
  });

  it("answers cancel to a report about a task that has already ended", async () => {
    const { taskId, key, token } = await newTask();
    expect((await api(`/v1/tasks/${taskId}/cancel`, key, { method: "POST" })).status).toBe(200);
    const late = await callback(taskId, "events", token, { type: "progress", seq: 5, progress: 10 });
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
      : await callback(taskId, "events", token, body);
    await expectProblem(response, 400, "VALIDATION_FAILED");
    expect(await taskOf(taskId, key)).toMatchObject({ status: "pending" });
  });
});

describe("POST /internal/tasks/{id}/outputs and PUT /internal/objects/{token}", () => {
  it("grants an upload URL whose PUT stores the output, so a completed report lists it on the CDN", async () => {
    const { taskId, key, userId, token } = await newTask();
    const bytes = fakeMp4(4096);
    await callback(taskId, "events", token, { type: "started", seq: 0 });
    const grantResponse = await callback(taskId, "outputs", token, { filename: "out.mp4", size: bytes.byteLength, content_type: "video/mp4; codecs=avc1" });
    expect(grantResponse.status).toBe(200);
    const grant = await grantResponse.json<{ upload_url: string; key: string }>();
    expect(grant.key).toBe(`outputs/${userId}/${taskId}/out.mp4`);

    const stored = await putObject(grant.upload_url, bytes);
    expect(stored.status).toBe(201);
    expect(await stored.json()).toEqual({ key: grant.key, size: bytes.byteLength, md5: await md5Hex(bytes), receipt: expect.any(String) });
    const object = await env.FILES.get(grant.key);
    expect(new Uint8Array(await object!.arrayBuffer())).toEqual(bytes);
    expect(object!.httpMetadata?.contentType).toBe("video/mp4");

    await callback(taskId, "events", token, { type: "completed", seq: 1, outputs: [{ filename: "out.mp4", size: bytes.byteLength }] });
    const task = await taskOf(taskId, key);
    expect(task).toMatchObject({ status: "completed", progress: 100, outputs: [{ filename: "out.mp4", size: bytes.byteLength }] });
    const download = await api(pathOf((task.outputs as { url: string }[])[0]!.url), undefined);
    expect(download.status).toBe(200);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);
  });

  it.each([
    ["a path", "../escape.mp4"],
    ["a sub-directory", "dir/out.mp4"],
    ["a hidden file", ".hidden"],
    ["a name with a space", "my out.mp4"],
  ])("refuses an output name with %s with 400 OUTPUT_NOT_ALLOWED", async (_name, filename) => {
    const { taskId, token } = await newTask();
    await expectProblem(await callback(taskId, "outputs", token, { filename, size: 5, content_type: "video/mp4" }), 400, "OUTPUT_NOT_ALLOWED");
  });

  it("refuses an output larger than the upload limit with 413", async () => {
    const { taskId, token } = await newTask();
    await expectProblem(await callback(taskId, "outputs", token, { filename: "huge.mp4", size: Number(env.MAX_UPLOAD_BYTES) + 1, content_type: "video/mp4" }), 413, "PAYLOAD_TOO_LARGE");
  });

  it("refuses a malformed request with 400 VALIDATION_FAILED", async () => {
    const { taskId, token } = await newTask();
    await expectProblem(await callback(taskId, "outputs", token, { filename: "out.mp4", size: -1, content_type: "video/mp4" }), 400, "VALIDATION_FAILED");
    await expectProblem(await callback(taskId, "outputs", token, { filename: "out.mp4" }), 400, "VALIDATION_FAILED");
  });

  it("refuses an upload for a task that has already ended with 409 and keeps nothing of it", async () => {
    const { taskId, key, userId, token } = await newTask();
    const grant = await (await callback(taskId, "outputs", token, { filename: "out.mp4", size: 5, content_type: "video/mp4" })).json<{ upload_url: string; key: string }>();
    await api(`/v1/tasks/${taskId}/cancel`, key, { method: "POST" });
    await expectProblem(await putObject(grant.upload_url, new TextEncoder().encode("hello")), 409, "TASK_NOT_RUNNABLE");
    await expectProblem(await putOutput(taskId, "late.mp4", token, fakeMp4(64)), 409, "TASK_NOT_RUNNABLE");
    expect(await env.FILES.head(grant.key)).toBeNull();
    expect(await env.FILES.head(`outputs/${userId}/${taskId}/late.mp4`)).toBeNull();
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM files WHERE task_id = ?").bind(taskId).first<{ n: number }>()).toEqual({ n: 0 });
  });

  it("refuses an upload whose length differs from the grant and stores nothing", async () => {
    const { taskId, token } = await newTask();
    const grant = await (await callback(taskId, "outputs", token, { filename: "out.mp4", size: 5, content_type: "video/mp4" })).json<{ upload_url: string; key: string }>();
    await expectProblem(await putObject(grant.upload_url, new TextEncoder().encode("hello world")), 400, "SIZE_MISMATCH");
    expect(await env.FILES.head(grant.key)).toBeNull();
  });

  it("refuses a tampered, expired or callback token as an upload URL with 403", async () => {
    const { taskId, userId, token } = await newTask();
    const grant = await (await callback(taskId, "outputs", token, { filename: "out.mp4", size: 5, content_type: "video/mp4" })).json<{ upload_url: string; key: string }>();
    const bytes = new TextEncoder().encode("hello");
    await expectProblem(await putObject(forge(grant.upload_url), bytes), 403, "SIGNATURE_INVALID");
    const expired = await signToken(env.SIGNING_SECRET, "output", { k: grant.key, u: userId, t: taskId, s: 5, ct: "video/mp4" }, -60);
    await expectProblem(await putObject(`http://127.0.0.1:8787/internal/objects/${expired}`, bytes), 403, "SIGNATURE_EXPIRED");
    await expectProblem(await putObject(`http://127.0.0.1:8787/internal/objects/${token}`, bytes), 403, "SIGNATURE_INVALID");
    expect(await env.FILES.head(grant.key)).toBeNull();
  });
});

describe("PUT /internal/tasks/{id}/outputs/{filename} (outputs_direct)", () => {
  it("stores an output PUT with the callback token, with no grant first, so a completed report lists it on the CDN", async () => {
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

    await callback(taskId, "events", token, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size: bytes.byteLength, receipt: answer.receipt }] });
    const task = await taskOf(taskId, key);
    expect(task).toMatchObject({ status: "completed", outputs: [{ filename: "out.mp4", size: bytes.byteLength }] });
    expect((task.outputs as Record<string, unknown>[])[0]).not.toHaveProperty("receipt");
    const download = await api(pathOf((task.outputs as { url: string }[])[0]!.url), undefined);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(bytes);
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

describe("receipts: the edge's signed word that it stored an output", () => {
  /** A task with one output stored by a direct PUT, and that PUT's receipt. */
  async function storedOutput() {
    const task = await newTask();
    const bytes = fakeMp4(1024);
    const answer = await (await putOutput(task.taskId, "out.mp4", task.token, bytes)).json<{ receipt: string }>();
    return { ...task, size: bytes.byteLength, receipt: answer.receipt };
  }

  it("completes a task whose every output carries its receipt without looking the objects up in R2", async () => {
    const { taskId, key, userId, token, size, receipt } = await storedOutput();
    // Gone from R2 behind the edge's back: only a lookup would notice, and the receipt stands in for it.
    await env.FILES.delete(`outputs/${userId}/${taskId}/out.mp4`);
    await callback(taskId, "events", token, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size, receipt }] });
    expect(await taskOf(taskId, key)).toMatchObject({ status: "completed" });
  });

  it.each([
    ["without a receipt", (receipt: string) => ({ receipt: undefined as string | undefined, sizeDelta: 0, name: "out.mp4", fromOther: false, value: receipt })],
    ["with a receipt for another size", (receipt: string) => ({ receipt, sizeDelta: 1, name: "out.mp4", fromOther: false, value: receipt })],
    ["with a receipt for another file name", (receipt: string) => ({ receipt, sizeDelta: 0, name: "other.mp4", fromOther: false, value: receipt })],
    ["with another task's receipt", (receipt: string) => ({ receipt, sizeDelta: 0, name: "out.mp4", fromOther: true, value: receipt })],
    ["with a forged receipt", (receipt: string) => ({ receipt: `${receipt.slice(0, -2)}xx`, sizeDelta: 0, name: "out.mp4", fromOther: false, value: receipt })],
  ])("checks R2 for an output reported %s, and fails the task when the object is not there", async (_case, make) => {
    const mine = await storedOutput();
    const other = await storedOutput();
    const { receipt, sizeDelta, name, fromOther } = make(mine.receipt);
    const target = fromOther ? other : mine;
    await env.FILES.delete(`outputs/${target.userId}/${target.taskId}/${name}`);
    const output = { filename: name, size: target.size + sizeDelta, ...(receipt ? { receipt } : {}) };
    await callback(target.taskId, "events", target.token, { type: "completed", seq: 0, outputs: [output] });
    expect(await taskOf(target.taskId, target.key)).toMatchObject({ status: "failed", error_code: "OUTPUT_UPLOAD_FAILED" });
  });
});

describe("ffmpeg's log on the terminal report", () => {
  it("stores the log of a completed report for GET /v1/tasks/{id}/logs, and the task keeps no log of its own", async () => {
    const { taskId, key, userId, token } = await newTask();
    const bytes = fakeMp4(2048);
    const grant = await (await callback(taskId, "outputs", token, { filename: "out.mp4", size: bytes.byteLength, content_type: "video/mp4" })).json<{ upload_url: string }>();
    expect((await putObject(grant.upload_url, bytes)).status).toBe(201);
    const log = "frame=  10 fps=0.0\nvideo:2kB audio:0kB\n";
    expect((await callback(taskId, "events", token, { type: "completed", seq: 0, outputs: [{ filename: "out.mp4", size: bytes.byteLength }], log })).status).toBe(200);
    const task = await taskOf(taskId, key);
    expect(task).toMatchObject({ status: "completed" });
    expect(task).not.toHaveProperty("log");
    const logs = await api(`/v1/tasks/${taskId}/logs`, key);
    expect(logs.status).toBe(200);
    expect(await logs.text()).toBe(log);
    expect(await env.FILES.head(`logs/${userId}/${taskId}.log`)).not.toBeNull();
  });

  it("stores the log of a failed report, also for a token signed without the owner (found in D1)", async () => {
    const { taskId, key } = await newTask();
    const withoutOwner = await callbackToken(taskId);
    const response = await callback(taskId, "events", withoutOwner, { type: "failed", seq: 0, error: "ffmpeg exited with code 1", error_code: "FFMPEG_FAILED", log: "Error: nope\n" });
    expect(response.status).toBe(200);
    expect(await taskOf(taskId, key)).toMatchObject({ status: "failed", error_code: "FFMPEG_FAILED" });
    expect(await (await api(`/v1/tasks/${taskId}/logs`, key)).text()).toBe("Error: nope\n");
  });

  it("keeps only the last 256 KiB of a longer log", async () => {
    const { taskId, key, token } = await newTask();
    const tail = "t".repeat(256 * 1024 - 6) + "\nend.\n";
    expect((await callback(taskId, "events", token, { type: "failed", seq: 0, error: "boom", error_code: "FFMPEG_FAILED", log: "h".repeat(1024) + tail })).status).toBe(200);
    expect(await (await api(`/v1/tasks/${taskId}/logs`, key)).text()).toBe(tail);
  });

  it("answers 404 for a validly signed token without owner of a task that does not exist, and stores nothing", async () => {
    const taskId = "tsk_doesnotexist0000000000";
    await expectProblem(await callback(taskId, "events", await callbackToken(taskId), { type: "failed", seq: 0, error: "x", error_code: "FFMPEG_FAILED", log: "log" }), 404, "NOT_FOUND");
  });
});
