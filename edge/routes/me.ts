import { createRoute } from "@hono/zod-openapi";
import { MeSchema } from "../../shared/schemas/files";
import { requireApiKey, unauthorized } from "../lib/auth";
import { bearerSecurity, createApp, problemResponses } from "../lib/openapi";

/** `GET /v1/me`: FFHub's clients call it to check that a key works. */
export const me = createApp();

me.use("/v1/me", requireApiKey);
me.openapi(
  createRoute({
    method: "get", path: "/v1/me", tags: ["Account"], summary: "The account the API key belongs to", security: bearerSecurity,
    responses: { 200: { description: "The account", content: { "application/json": { schema: MeSchema } } }, 401: problemResponses[401] },
  }),
  async (c) => {
    const user = await c.env.DB.prepare("SELECT id, name, email, created_at FROM users WHERE id = ?")
      .bind(c.get("userId"))
      .first<{ id: string; name: string; email: string | null; created_at: string }>();
    if (!user) throw unauthorized();
    return c.json({ user_id: user.id, name: user.name, email: user.email, created_at: user.created_at }, 200);
  },
);
