import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { answerEdgeCall, fetchInput, serveEdgeCalls, TranscoderContainer } from "../../../edge/dispatch/transcoder-container";
import { cdn } from "../../../edge/routes/cdn";
import { internal } from "../../../edge/routes/internal";
import { signToken } from "../../../edge/lib/signed-token";
import { CONTAINER_EDGE_HOST, EGRESS_REFUSED_HEADER } from "../../../shared/egress";
import { originUrl, streamedFile } from "../files/fixtures";
import { originPaths } from "../files/origin";
import { api, createUser, fakeMp4, md5Hex, postJson, uploadFile } from "../helpers";

const EDGE = `https://${CONTAINER_EDGE_HOST}`;

// As edge/index.ts does at start.
beforeAll(() => serveEdgeCalls(internal, cdn));
const MB = 1024 * 1024;

/** A fresh task, its callback token, and the id of the container object that would run it. */
async function newTask() {
  const { key, userId } = await createUser();
  const response = await postJson("/v1/tasks", key, { command: "ffmpeg -i https://example.com/in.mp4 -t 2 out.mp4" });
  expect(response.status).toBe(201);
  const { task_id: taskId } = await response.json<{ task_id: string }>();
  return { taskId, key, userId, token: await signToken(env.SIGNING_SECRET, "callback", { t: taskId, u: userId }, 3600), containerId: env.TRANSCODER.idFromName(taskId).toString() };
}

function fromContainer(containerId: string, path: string, token: string | undefined, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (token) headers.set("authorization", `Bearer ${token}`);
  return answerEdgeCall(new Request(`${EDGE}${path}`, { ...init, headers }), env, containerId);
}

const json = (body: unknown): RequestInit => ({ method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

async function expectProblem(response: Response, status: number, code: string): Promise<void> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  expect((await response.json<{ code: string }>()).code).toBe(code);
}

describe("TranscoderContainer's outbound handlers", () => {
  it("answer the edge's virtual host inside the Worker and send every other host through the input handler", () => {
    expect(TranscoderContainer.outboundByHost?.[CONTAINER_EDGE_HOST]).toBeTypeOf("function");
    expect(TranscoderContainer.outbound).toBeTypeOf("function");
  });
});

describe("answerEdgeCall (the container's calls to the edge)", () => {
  it("delivers a report of the container's own task to the task", async () => {
    const task = await newTask();
    const response = await fromContainer(task.containerId, `/internal/tasks/${task.taskId}/events`, task.token, json({ type: "started", seq: 0 }));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: true, cancel: false });
    expect(await (await api(`/v1/tasks/${task.taskId}`, task.key)).json()).toMatchObject({ status: "running" });
  });

  it("refuses a container's call for another task, even with that task's valid token", async () => {
    const mine = await newTask();
    const theirs = await newTask();
    await expectProblem(await fromContainer(mine.containerId, `/internal/tasks/${theirs.taskId}/events`, theirs.token, json({ type: "started", seq: 0 })), 401, "UNAUTHORIZED");
    await expectProblem(await fromContainer(mine.containerId, `/internal/tasks/${theirs.taskId}/events`, theirs.token, json({ type: "failed", seq: 1, error: "x", error_code: "FFMPEG_FAILED", log: "x" })), 401, "UNAUTHORIZED");
    expect(await (await api(`/v1/tasks/${theirs.taskId}`, theirs.key)).json()).toMatchObject({ status: "pending" });
    expect((await api(`/v1/tasks/${theirs.taskId}/logs`, theirs.key)).status).toBe(404);
  });

  it("refuses paths outside the task callbacks and output uploads", async () => {
    const task = await newTask();
    await expectProblem(await fromContainer(task.containerId, "/v1/me", task.token), 401, "UNAUTHORIZED");
    await expectProblem(await fromContainer(task.containerId, `/internal/tasks/${task.taskId}/../../v1/me`, task.token), 401, "UNAUTHORIZED");
    await expectProblem(await fromContainer(task.containerId, "/internal/objects/anything", task.token, { method: "PUT", body: "x" }), 401, "UNAUTHORIZED");
  });

  it("serves the service's own files to a container from R2, without a token, for reads only", async () => {
    const task = await newTask();
    const data = fakeMp4(64 * 1024);
    const upload = await uploadFile(task.key, data);
    expect(upload.status).toBe(201);
    const { url } = await upload.json<{ url: string }>();
    const path = new URL(url).pathname;
    const read = await fromContainer(task.containerId, path, undefined);
    expect(read.status).toBe(200);
    expect(await md5Hex(new Uint8Array(await read.arrayBuffer()))).toBe(await md5Hex(data));
    expect((await fromContainer(task.containerId, path, undefined, { method: "HEAD" })).status).toBe(200);
    expect((await fromContainer(task.containerId, `${path}x`, undefined)).status).toBe(404);
    await expectProblem(await fromContainer(task.containerId, path, undefined, { method: "PUT", body: "x" }), 401, "UNAUTHORIZED");
  });

  it("streams an output larger than a Worker request body may be (110 MB) into R2", async () => {
    const task = await newTask();
    const size = 110 * MB;
    const file = streamedFile(size);
    const put = await fromContainer(task.containerId, `/internal/tasks/${task.taskId}/outputs/big.mp4`, task.token, { method: "PUT", headers: { "content-length": String(size), "content-type": "video/mp4" }, body: file.body });
    expect(put.status).toBe(201);
    const key = `outputs/${task.userId}/${task.taskId}/big.mp4`;
    expect((await env.FILES.head(key))?.size).toBe(size);
    expect(await put.json()).toMatchObject({ key, size, md5: await file.md5 });
  });

  it("streams an output PUT into R2 for the container's own task, and refuses it from another task's container", async () => {
    const mine = await newTask();
    const theirs = await newTask();
    const size = 3 * MB;
    const path = `/internal/tasks/${theirs.taskId}/outputs/out.mp4`;
    const refused = streamedFile(size);
    await expectProblem(await answerEdgeCall(new Request(`${EDGE}${path}`, { method: "PUT", headers: { authorization: `Bearer ${theirs.token}`, "content-length": String(size), "content-type": "video/mp4" }, body: refused.body }), env, mine.containerId), 401, "UNAUTHORIZED");
    const key = `outputs/${theirs.userId}/${theirs.taskId}/out.mp4`;
    expect(await env.FILES.head(key)).toBeNull();
    const file = streamedFile(size);
    const put = await answerEdgeCall(new Request(`${EDGE}${path}`, { method: "PUT", headers: { authorization: `Bearer ${theirs.token}`, "content-length": String(size), "content-type": "video/mp4" }, body: file.body }), env, theirs.containerId);
    expect(put.status).toBe(201);
    expect(await put.json()).toMatchObject({ key, size, md5: await file.md5 });
    expect((await env.FILES.head(key))?.size).toBe(size);
  });

});

describe("fetchInput (every other request from the container)", () => {
  it("passes a download through the guarded fetcher", async () => {
    const response = await fetchInput(new Request(originUrl(originPaths.file(4096))), env);
    expect(response.status).toBe(200);
    expect((await response.arrayBuffer()).byteLength).toBe(4096);
  });

  it("hands a redirect back instead of following it, so every hop is checked again", async () => {
    const response = await fetchInput(new Request(originUrl(originPaths.redirect("http://169.254.169.254/latest/meta-data/"))), env);
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("http://169.254.169.254/latest/meta-data/");
    await response.body?.cancel();
  });

  it.each([
    ["a private address", "http://10.0.0.5/in.mp4", "URL_HOST_BLOCKED"],
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/", "URL_HOST_BLOCKED"],
    ["an internal name", "https://metadata.google.internal/x", "URL_HOST_BLOCKED"],
  ])("refuses %s with the refusal header the transcoder reads", async (_name, url, code) => {
    const response = await fetchInput(new Request(url), env);
    expect(response.headers.get(EGRESS_REFUSED_HEADER)).toBe(code);
    await expectProblem(response, 400, code);
  });

  it("refuses loopback in production although development allow-lists it", async () => {
    const production: Env = { ...env, ENVIRONMENT: "production" };
    const response = await fetchInput(new Request("http://127.0.0.1/in.mp4"), production);
    expect(response.headers.get(EGRESS_REFUSED_HEADER)).toBe("URL_HOST_BLOCKED");
    await response.body?.cancel();
  });

  it("lets no request but a read out: a POST never reaches its host", async () => {
    const hook = `egress-${crypto.randomUUID()}`;
    const response = await fetchInput(new Request(originUrl(originPaths.hook(hook)), { method: "POST", body: "secret" }), env);
    expect(response.headers.get(EGRESS_REFUSED_HEADER)).toBe("URL_NOT_ALLOWED");
    await response.body?.cancel();
    expect(await (await fetch(originUrl(originPaths.hookLog(hook)))).json()).toEqual([]);
  });
});
