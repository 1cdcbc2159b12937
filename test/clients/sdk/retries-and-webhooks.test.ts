import { randomBytes } from "node:crypto";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { FFedge, FFedgeError, verifyWebhook } from "../../../clients/sdk/src/index";
import { retryAfterMs } from "../../../clients/sdk/src/http";

/** Headers as any Standard Webhooks sender signs them: one `v1,` signature per secret, space-separated. */
function signedHeaders(secrets: string[], id: string, body: string, at: Date): Record<string, string> {
  const signature = secrets.map((secret) => new Webhook(secret).sign(id, at, body)).join(" ");
  return { "webhook-id": id, "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": signature };
}

/** A tiny HTTP server that answers each request with the next scripted reply and notes when each arrived. */
async function scripted(replies: ((req: IncomingMessage, res: ServerResponse) => void)[]): Promise<{ url: string; arrivals: { method: string; at: number; key?: string; auth?: string; url?: string }[] }> {
  const arrivals: { method: string; at: number; key?: string; auth?: string; url?: string }[] = [];
  server = createServer((req, res) => {
    arrivals.push({ method: req.method!, at: Date.now(), key: req.headers["idempotency-key"] as string | undefined, auth: req.headers.authorization, url: req.url });
    req.resume();
    const reply = replies[Math.min(arrivals.length - 1, replies.length - 1)]!;
    req.on("end", () => reply(req, res));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, arrivals };
}

let server: Server | undefined;
afterEach(async () => {
  if (!server) return;
  server.closeAllConnections();
  await new Promise((resolve) => server!.close(resolve));
  server = undefined;
});

const problem = (status: number, code: string, headers: Record<string, string> = {}) => (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(status, { "content-type": "application/problem+json", ...headers });
  res.end(JSON.stringify({ type: "about:blank", title: code, status, detail: `${code} here`, code }));
};
const me = (_req: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ user_id: "usr_1" }));
};

describe("retries", () => {
  it("waits as long as Retry-After says before retrying a 429, then succeeds", async () => {
    const { url, arrivals } = await scripted([problem(429, "RATE_LIMITED", { "retry-after": "1" }), me]);
    const ff = new FFedge({ apiKey: "ffe_k", baseUrl: url });
    expect(await ff.me()).toEqual({ user_id: "usr_1" });
    expect(arrivals).toHaveLength(2);
    expect(arrivals[1]!.at - arrivals[0]!.at).toBeGreaterThanOrEqual(1000);
    expect(arrivals.every((a) => a.auth === "Bearer ffe_k" && !a.url!.includes("ffe_k"))).toBe(true);
  });

  it("retries 5xx and dropped connections, then gives up with the last problem's code", async () => {
    const drop = (req: IncomingMessage) => req.socket.destroy();
    const { url, arrivals } = await scripted([drop, problem(503, "STORAGE_UNAVAILABLE"), problem(503, "STORAGE_UNAVAILABLE")]);
    const error = await new FFedge({ baseUrl: url, maxRetries: 2 }).me().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FFedgeError);
    expect(error).toMatchObject({ status: 503, code: "STORAGE_UNAVAILABLE", detail: "STORAGE_UNAVAILABLE here" });
    expect(arrivals).toHaveLength(3);
  });

  it("retries a task submission with the same Idempotency-Key, and never a POST without one", async () => {
    const created = (_req: IncomingMessage, res: ServerResponse) => {
      res.writeHead(201, { "content-type": "application/json" });
      res.end(JSON.stringify({ task_id: "task_1", status: "pending", created_at: "now" }));
    };
    const first = await scripted([problem(500, "INTERNAL"), created]);
    expect((await new FFedge({ baseUrl: first.url }).tasks.create("ffmpeg -i https://x/a.mp4 b.mp4")).task_id).toBe("task_1");
    expect(first.arrivals).toHaveLength(2);
    expect(first.arrivals[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.arrivals[1]!.key).toBe(first.arrivals[0]!.key);
    server!.closeAllConnections();
    await new Promise((resolve) => server!.close(resolve));
    const second = await scripted([problem(503, "STORAGE_UNAVAILABLE"), me]);
    const error = await new FFedge({ baseUrl: second.url }).webhookSecret.rotate().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "STORAGE_UNAVAILABLE" });
    expect(second.arrivals).toHaveLength(1);
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    expect(retryAfterMs("2")).toBe(2000);
    expect(retryAfterMs(new Date(Date.now() + 30_000).toUTCString())).toBeGreaterThan(25_000);
    expect(retryAfterMs("soon")).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});

describe("verifyWebhook", () => {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  const other = `whsec_${randomBytes(24).toString("base64")}`;
  const body = JSON.stringify({ task_id: "task_1", status: "completed", progress: 100 });

  it("accepts a delivery signed by the edge's signer and returns its task", async () => {
    const headers = { ...signedHeaders([secret], "msg_1", body, new Date()) };
    expect(await verifyWebhook(body, headers, secret)).toMatchObject({ task_id: "task_1", status: "completed" });
    expect(await verifyWebhook(new TextEncoder().encode(body), new Headers({ ...headers }), secret)).toMatchObject({ task_id: "task_1" });
  });

  it("accepts either secret of a rotation", async () => {
    const headers = { ...signedHeaders([other, secret], "msg_2", body, new Date()) };
    expect(await verifyWebhook(body, headers, secret)).toMatchObject({ task_id: "task_1" });
    expect(await verifyWebhook(body, headers, other)).toMatchObject({ task_id: "task_1" });
  });

  it("refuses a tampered body, another secret, an old timestamp and missing headers", async () => {
    const headers = { ...signedHeaders([secret], "msg_3", body, new Date()) };
    const refused = async (promise: Promise<unknown>) => expect(await promise.catch((e: unknown) => e)).toMatchObject({ code: "WEBHOOK_SIGNATURE_INVALID" });
    await refused(verifyWebhook(body.replace("completed", "failed"), headers, secret));
    await refused(verifyWebhook(body, headers, other));
    await refused(verifyWebhook(body, { ...signedHeaders([secret], "msg_4", body, new Date(Date.now() - 10 * 60_000)) }, secret));
    await refused(verifyWebhook(body, { "webhook-id": "msg_3" }, secret));
    await refused(verifyWebhook(body, { ...headers, "webhook-id": "msg_other" }, secret));
  });
});
