import { SELF, env } from "cloudflare:test";
import { newKeyStatements } from "../../shared/accounts";
import { toHex } from "../../shared/encoding";
import { taskStub } from "../../edge/lib/stubs";
import { insertTask } from "../../edge/tasks/repository";

let counter = 0;

/** A fresh user with one API key, straight into D1. */
export async function createUser(name = `user${++counter}-${crypto.randomUUID().slice(0, 8)}`): Promise<{ userId: string; key: string; name: string }> {
  const { key, statements } = await newKeyStatements(name);
  await env.DB.batch(statements.map((s) => env.DB.prepare(s.sql).bind(...s.params)));
  const row = await env.DB.prepare("SELECT id FROM users WHERE name = ?").bind(name).first<{ id: string }>();
  return { userId: row!.id, key, name };
}

export function api(path: string, key: string | undefined, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (key) headers.set("authorization", `Bearer ${key}`);
  return SELF.fetch(`http://localhost:8787${path}`, { ...init, headers });
}

export function postJson(path: string, key: string | undefined, body: unknown): Promise<Response> {
  return api(path, key, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

export function multipart(parts: { name: string; filename?: string; type?: string; data: Uint8Array | string }[]): { body: Uint8Array; contentType: string } {
  const boundary = `----ffedge${crypto.randomUUID()}`;
  const encoder = new TextEncoder();
  const chunks: Uint8Array[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ""}`;
    chunks.push(encoder.encode(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.type ? `Content-Type: ${part.type}\r\n` : ""}\r\n`));
    chunks.push(typeof part.data === "string" ? encoder.encode(part.data) : part.data);
    chunks.push(encoder.encode("\r\n"));
  }
  chunks.push(encoder.encode(`--${boundary}--\r\n`));
  const body = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

export async function uploadFile(key: string, data: Uint8Array | string, type = "video/mp4", filename = "clip.mp4"): Promise<Response> {
  const form = multipart([{ name: "file", filename, type, data }]);
  return api("/api/upload/file", key, { method: "POST", headers: { "content-type": form.contentType }, body: form.body });
}

/** A few bytes that sniff as an MP4 (an `ftyp` box) followed by filler. */
export function fakeMp4(size = 4096): Uint8Array {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) bytes[i] = (i * 31 + 7) & 0xff;
  bytes.set([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d], 0);
  return bytes;
}

export async function md5Hex(data: Uint8Array | string): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  return toHex(await crypto.subtle.digest("MD5", bytes));
}

export function pathOf(url: string): string {
  return new URL(url).pathname;
}

/** A production env as docs/deploy.md leaves it (every required setting set and valid), with `overrides` on top. */
export function productionEnv(overrides: Partial<Env> = {}): Env {
  return {
    ...env,
    ENVIRONMENT: "production",
    PUBLIC_URL: "https://cdn.ffedge-user.net",
    CN_PUBLIC_URL: "https://cdn.ffedge-user.cn",
    EDGE_URL: "https://api.ffedge.net",
    TRANSCODER_SECRET: "t".repeat(43),
    SIGNING_SECRET: "s".repeat(43),
    D1_DATABASE_ID: "3f1c2b3a-4d5e-4f70-8a9b-0c1d2e3f4a5b",
    R2_ACCOUNT_ID: "0123456789abcdef0123456789abcdef",
    R2_ACCESS_KEY_ID: "access",
    R2_SECRET_ACCESS_KEY: "secret",
    MAIL_FROM: "ffedge <no-reply@ffedge.net>",
    ...overrides,
  };
}

/** A pending task of a fresh user: its D1 row and its initialised Durable Object. */
export async function newTaskObject(): Promise<{ taskId: string; userId: string; stub: ReturnType<typeof taskStub> }> {
  const { userId } = await createUser();
  const taskId = `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const createdAt = new Date().toISOString();
  await insertTask(env.DB, { id: taskId, user_id: userId, command: "-i https://example.com/a.mp4 out.mp4", with_metadata: 0, webhook_url: null, created_at: createdAt });
  const stub = taskStub(env, taskId);
  await stub.init({ task_id: taskId, user_id: userId, created_at: createdAt });
  return { taskId, userId, stub };
}
