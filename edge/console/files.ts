import type { Context } from "hono";
import type { UploadRecord } from "../../shared/schemas/files";
import { readSession } from "../accounts/sessions";
import { listUploads, toUploadRecord } from "../files/records";

type ListedFile = UploadRecord & { filename: string | null; created_at: string };

/**
 * The signed-in user's unexpired uploads, newest first, for the pages that list them (Files and
 * the composer's input picker); null when the request has no live session.
 */
export async function filesOfSession(c: Context<{ Bindings: Env }>): Promise<ListedFile[] | null> {
  const session = await readSession(c);
  if (!session) return null;
  const results = await listUploads(c.env.DB, session.userId, 200);
  return results.map((row) => ({ ...toUploadRecord(c.env, row), filename: row.original_name, created_at: row.created_at }));
}
