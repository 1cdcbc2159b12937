import { z } from "@hono/zod-openapi";
import { AppError } from "../../shared/errors";
import { purgeCached } from "../files/cdn-cache";
import { FileListSchema, ListFilesQuerySchema } from "../../shared/schemas/files";
import { deleteFile, findFile, listFiles, toUploadRecord } from "../files/records";
import { requireApiKey } from "../accounts/credentials";
import { bearerSecurity, createApp, pageRoute, problemResponses } from "../lib/openapi";

const PREFIX = "/api/files/";

/** The caller's stored files: `{storage_url}/api/files/{key}`. */
export const files = createApp();

files.use("/api/files", requireApiKey);
files.use(`${PREFIX}*`, requireApiKey);

files.openapi(
  pageRoute({ path: "/api/files", tag: "Storage", summary: "Your unexpired uploads and task outputs, newest first", description: "A page of files", query: ListFilesQuerySchema, page: FileListSchema }),
  async (c) => {
    const { total, rows } = await listFiles(c.env.DB, c.get("userId"), c.req.valid("query"));
    return c.json({ total, files: rows.map((row) => ({ ...toUploadRecord(c.env, row), filename: row.original_name, created_at: row.created_at })) }, 200);
  },
);

files.openAPIRegistry.registerPath({
  method: "delete", path: "/api/files/{key}", tags: ["Storage"], security: bearerSecurity,
  summary: "Delete one of your files before it expires",
  description: "`key` is the record's `key`, URL-encoded (`uploads%2F...`) or as a path (`/api/files/uploads/<user>/<file>`). The CDN answers 404 from then on.",
  request: { params: z.object({ key: z.string().openapi({ param: { name: "key", in: "path" }, example: "uploads%2Fusr_3k9x%2Ff1c2b3a4d5e6f708.mp4" }) }) },
  responses: { 204: { description: "Deleted" }, ...problemResponses, 404: { description: "No such file for this key (another user's file included)" } },
});

files.delete(`${PREFIX}:key{.+}`, async (c) => {
  const key = keyFromPath(new URL(c.req.url).pathname);
  // Another user's file answers exactly like a missing one: 404, never 403.
  const file = key ? await findFile(c.env.DB, c.get("userId"), key) : null;
  if (!file) throw new AppError("NOT_FOUND", `You have no file '${key ?? ""}'.`);
  await deleteFile(c.env, file);
  await purgeCached(c.env, [file.key]);
  return c.body(null, 204);
});

/** Both forms name the key: one encoded segment, or the key's own segments. */
function keyFromPath(pathname: string): string | undefined {
  try {
    return decodeURIComponent(pathname.slice(PREFIX.length)) || undefined;
  } catch {
    return undefined;
  }
}
