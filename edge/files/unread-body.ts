import { createMiddleware } from "hono/factory";

/**
 * Cancels a request body that the answer left unread (an upload refused from its headers: too
 * large, unauthorised, rate limited), so the runtime stops taking it and the client gets the
 * answer now. Otherwise the rest of the body is still owed: `wrangler dev` drains it before
 * answering (its ensure-req-body-drained middleware), so a refused 1 GiB upload held its 413
 * until a gigabyte had been read, and the dev proxy then reported "Network connection lost"
 * as a plain-text 503 for the next request on that connection.
 */
export const discardUnreadBody = createMiddleware(async (c, next) => {
  await next();
  const body = c.req.raw.body;
  // The answer is decided; a body the client stopped sending has nothing left to cancel.
  if (body && !c.req.raw.bodyUsed && !body.locked) await body.cancel().catch(() => {});
});
