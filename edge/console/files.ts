import type { Context } from "hono";
import type { UploadRecord } from "../../shared/schemas/files";
import { readSession } from "../accounts/sessions";
import { toUploadRecord } from "../files/records";

type ListedFile = UploadRecord & { filename: string | null; created_at: string };

/**
 * The signed-in user's unexpired uploads, newest first, for the pages that list them (Files and
 * the composer's input picker); null when the request has no live session.
 */
export async function filesOfSession(c: Context<{ Bindings: Env }>): Promise<ListedFile[] | null> {
  const session = await readSession(c);
  if (!session) return null;
  const { results } = await c.env.DB.prepare(
    `SELECT key, md5, size, content_type, original_name, created_at, expires_at FROM files
     WHERE user_id = ? AND kind = 'upload' AND expires_at > ? ORDER BY created_at DESC LIMIT 200`,
  )
    .bind(session.userId, new Date().toISOString())
    .all<{ key: string; md5: string | null; size: number; content_type: string; original_name: string | null; created_at: string; expires_at: string }>();
  return results.map((row) => ({ ...toUploadRecord(c.env, row), filename: row.original_name, created_at: row.created_at }));
}
