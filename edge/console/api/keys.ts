import { createRoute, z } from "@hono/zod-openapi";
import { AppError } from "../../../shared/errors";
import { ApiKeyListSchema, CreateApiKeySchema, CreatedApiKeySchema } from "../../../shared/schemas/accounts";
import { createApiKey, listApiKeys, revokeApiKey } from "../../accounts/api-keys";
import { requireSession } from "./guards";
import { createApp } from "../../lib/openapi";
import { json, problems } from "./routes";

/** The signed-in user's API keys: list, create (the key is shown once), revoke. */
export const keys = createApp();
keys.use("/console/api/keys", requireSession);
keys.use("/console/api/keys/*", requireSession);

keys.openapi(
  createRoute({ method: "get", path: "/console/api/keys", hide: true, responses: { 200: { description: "Keys, newest first", content: { "application/json": { schema: ApiKeyListSchema } } }, ...problems } }),
  async (c) => c.json({ keys: await listApiKeys(c.env.DB, c.get("userId")) }, 200),
);

keys.openapi(
  createRoute({ method: "post", path: "/console/api/keys", hide: true, request: json(CreateApiKeySchema), responses: { 201: { description: "The new key, shown only here", content: { "application/json": { schema: CreatedApiKeySchema } } }, ...problems } }),
  async (c) => {
    const { name } = c.req.valid("json");
    const { key, prefix, createdAt } = await createApiKey(c.env.DB, c.get("userId"), name);
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
    if (!(await revokeApiKey(c.env.DB, c.get("userId"), id))) throw new AppError("NOT_FOUND", `You have no key '${id}'.`);
    return c.body(null, 204);
  },
);
