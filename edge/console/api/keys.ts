import { createRoute, z } from "@hono/zod-openapi";
import { generateApiKey } from "../../../shared/api-keys";
import { hashToken } from "../../../shared/token-hash";
import { AppError } from "../../../shared/errors";
import { ApiKeyListSchema, CreateApiKeySchema, CreatedApiKeySchema } from "../../../shared/schemas/accounts";
import { requireSession } from "./guards";
import { createApp } from "../../lib/openapi";
import { json, problems } from "./routes";

/** The signed-in user's API keys: list, create (the key is shown once), revoke. */
export const keys = createApp();
keys.use("/console/api/keys", requireSession);
keys.use("/console/api/keys/*", requireSession);

keys.openapi(
  createRoute({ method: "get", path: "/console/api/keys", hide: true, responses: { 200: { description: "Keys, newest first", content: { "application/json": { schema: ApiKeyListSchema } } }, ...problems } }),
  async (c) => {
    const { results } = await c.env.DB.prepare(
      "SELECT prefix AS id, name, prefix, created_at, last_used_at, revoked_at FROM api_keys WHERE user_id = ? ORDER BY created_at DESC, prefix",
    )
      .bind(c.get("userId"))
      .all<z.infer<typeof ApiKeyListSchema>["keys"][number]>();
    return c.json({ keys: results }, 200);
  },
);

keys.openapi(
  createRoute({ method: "post", path: "/console/api/keys", hide: true, request: json(CreateApiKeySchema), responses: { 201: { description: "The new key, shown only here", content: { "application/json": { schema: CreatedApiKeySchema } } }, ...problems } }),
  async (c) => {
    const { name } = c.req.valid("json");
    const { key, prefix } = generateApiKey();
    const createdAt = new Date().toISOString();
    await c.env.DB.prepare("INSERT INTO api_keys (hash, prefix, user_id, created_at, name) VALUES (?, ?, ?, ?, ?)")
      .bind(await hashToken(key), prefix, c.get("userId"), createdAt, name)
      .run();
    c.header("cache-control", "no-store");
    return c.json({ id: prefix, name, prefix, created_at: createdAt, key }, 201);
  },
);

keys.openapi(
  createRoute({
    method: "delete", path: "/console/api/keys/{id}", hide: true,
    request: { params: z.object({ id: z.string().min(1).max(64) }) },
    responses: { 204: { description: "Revoked" }, ...problems, 404: { description: "No such key of yours" } },
  }),
  async (c) => {
    const { id } = c.req.valid("param");
    const userId = c.get("userId");
    const row = await c.env.DB.prepare("SELECT revoked_at FROM api_keys WHERE prefix = ? AND user_id = ?").bind(id, userId).first<{ revoked_at: string | null }>();
    if (!row) throw new AppError("NOT_FOUND", `You have no key '${id}'.`);
    await c.env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE prefix = ? AND user_id = ? AND revoked_at IS NULL").bind(new Date().toISOString(), id, userId).run();
    return c.body(null, 204);
  },
);
