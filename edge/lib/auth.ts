import type { Context } from "hono";

/** What a request's authentication leaves on it; edge/accounts/credentials.ts checks the credentials themselves. */

/** A signed-in console session as a request carries it; edge/accounts/sessions.ts starts, reads and ends them. */
export interface Session {
  hash: string;
  userId: string;
  email: string | null;
  csrfToken: string;
}

export type AuthVariables = {
  userId: string;
  /** Set on console requests: the signed-in session. */
  session?: Session;
  /** Set on GET /v1/tasks/{task_id} without a key while PUBLIC_TASK_STATUS allows it. */
  anonymousTaskRead?: boolean;
  /** The SHA-256 of the API key that authenticated the request. */
  apiKeyHash?: string;
  /** What authenticated the request, as `liveCredentials` checks it: an API key's hash or `session:<hash>`. */
  credential?: string;
};

/** The caller's address as Cloudflare saw it; locally every request comes from the same place. */
export function clientAddress(c: Context): string {
  return c.req.header("cf-connecting-ip") ?? "local";
}

/** Compares secrets without leaking, through timing, how much of them matched. */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = new TextEncoder().encode(a);
  const right = new TextEncoder().encode(b);
  return left.byteLength === right.byteLength && crypto.subtle.timingSafeEqual(left, right);
}
