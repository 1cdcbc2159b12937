import { SELF } from "cloudflare:test";
import { expect } from "vitest";

export const ORIGIN = "http://localhost:8787";

let counter = 0;

/** A unique address for each test, so tests never share accounts. */
export function newEmail(): string {
  return `user${++counter}-${crypto.randomUUID().slice(0, 8)}@example.com`;
}

export const PASSWORD = "correct horse battery";

interface RequestOptions {
  method?: string;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  /** Send the session's CSRF token (default: on state-changing methods). */
  csrf?: boolean | string;
  /** The Origin header; null sends none. */
  origin?: string | null;
}

/**
 * What a browser on the console page does: keeps the session cookie (HttpOnly, so only the
 * Set-Cookie headers reveal it), sends Origin on every request and the CSRF token it was given.
 * Each client has its own client address so that sign-in limits per address do not cross tests.
 */
export class ConsoleClient {
  cookie: string | undefined;
  csrfToken: string | undefined;
  lastSetCookie: string | undefined;
  readonly address = `10.${(counter * 7) % 250}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;

  async fetch(path: string, options: RequestOptions = {}): Promise<Response> {
    const method = options.method ?? (options.json !== undefined ? "POST" : "GET");
    const headers = new Headers(options.headers);
    headers.set("cf-connecting-ip", this.address);
    if (options.origin !== null) headers.set("origin", options.origin ?? ORIGIN);
    if (this.cookie) headers.set("cookie", `ffedge_session=${this.cookie}`);
    const unsafe = !["GET", "HEAD"].includes(method);
    const csrf = options.csrf ?? unsafe;
    if (typeof csrf === "string") headers.set("x-csrf-token", csrf);
    else if (csrf && this.csrfToken) headers.set("x-csrf-token", this.csrfToken);
    let body = options.body;
    if (options.json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(options.json);
    }
    const response = await SELF.fetch(`${ORIGIN}${path}`, { method, headers, body, redirect: "manual" });
    for (const cookie of response.headers.getSetCookie()) {
      if (!cookie.startsWith("ffedge_session=")) continue;
      this.lastSetCookie = cookie;
      const value = cookie.slice("ffedge_session=".length).split(";")[0]!;
      this.cookie = value && !/max-age=0/i.test(cookie) ? value : undefined;
    }
    return response;
  }

  async signUp(email: string, password = PASSWORD): Promise<Response> {
    return this.fetch("/console/api/auth/signup", { json: { email, password } });
  }

  async signIn(email: string, password = PASSWORD): Promise<Response> {
    const response = await this.fetch("/console/api/auth/signin", { json: { email, password } });
    if (response.ok) this.csrfToken = (await response.clone().json<{ csrf_token: string }>()).csrf_token;
    return response;
  }

  /** Follows the newest link of this kind mailed to `email`, as the console page does. */
  async follow(email: string, kind: "verify" | "reset", body: Record<string, unknown> = {}): Promise<Response> {
    const link = await waitForLink(email, kind);
    const token = new URL(link).searchParams.get("token");
    return this.fetch(`/console/api/auth/${kind}`, { json: { token, ...body } });
  }
}

export interface OutboxMessage {
  id: string;
  to: string;
  subject: string;
  text: string;
  links: string[];
  created_at: string;
}

export async function outbox(to: string): Promise<OutboxMessage[]> {
  const response = await SELF.fetch(`${ORIGIN}/console/api/dev/outbox?to=${encodeURIComponent(to)}`);
  expect(response.status).toBe(200);
  return (await response.json<{ messages: OutboxMessage[] }>()).messages;
}

/** Mail is sent after the response (so timing does not reveal accounts): poll for it. */
export async function waitForMail(to: string, matches: (message: OutboxMessage) => boolean, count = 1): Promise<OutboxMessage[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const messages = (await outbox(to)).filter(matches);
    if (messages.length >= count) return messages;
    if (Date.now() > deadline) throw new Error(`no mail to ${to} matched; outbox: ${JSON.stringify(await outbox(to))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function waitForLink(to: string, kind: "verify" | "reset"): Promise<string> {
  const [message] = await waitForMail(to, (m) => m.links.some((link) => link.includes(`/console/${kind}?token=`)));
  return message!.links.find((link) => link.includes(`/console/${kind}?token=`))!;
}

/** Signed up, verified through the mailed link, and signed in. */
export async function signedInUser(email = newEmail(), password = PASSWORD): Promise<{ client: ConsoleClient; email: string; userId: string }> {
  const client = new ConsoleClient();
  expect((await client.signUp(email, password)).status).toBe(202);
  expect((await client.follow(email, "verify")).status).toBe(200);
  const response = await client.signIn(email, password);
  expect(response.status).toBe(200);
  return { client, email, userId: (await response.json<{ user_id: string }>()).user_id };
}
