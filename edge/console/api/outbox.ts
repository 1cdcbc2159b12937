import { createRoute, z } from "@hono/zod-openapi";
import { AppError } from "../../../shared/errors";
import { OutboxSchema } from "../../../shared/schemas/accounts";
import { readOutbox } from "../../accounts/mail";
import { config } from "../../lib/config";
import { createApp } from "../../lib/openapi";
import { problems } from "./routes";

/** Development only: the mails that would have been sent. Production has no such route. */
export const outbox = createApp();

outbox.openapi(
  createRoute({
    method: "get", path: "/console/api/dev/outbox", hide: true,
    request: { query: z.object({ to: z.string().max(254).optional() }) },
    responses: { 200: { description: "Newest first, at most 50", content: { "application/json": { schema: OutboxSchema } } }, ...problems, 404: { description: "Production" } },
  }),
  async (c) => {
    if (config(c.env).production) throw new AppError("NOT_FOUND", `There is no route ${c.req.method} ${c.req.path}.`);
    c.header("cache-control", "no-store");
    return c.json({ messages: await readOutbox(c.env.DB, c.req.valid("query").to) }, 200);
  },
);
