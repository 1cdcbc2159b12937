import { toHex } from "../../shared/encoding";
import type { FileExpiredEvent } from "../../shared/schemas/webhooks";
import { log } from "../lib/log";
import { subscribedEndpoints } from "./endpoints";
import { fanOutToEndpoints } from "./handover";

/** The owner, kind and task of a stored file, from its key: `uploads/<user>/<file>` or `outputs/<user>/<task>/<file>`. */
function describeKey(key: string): { userId: string; kind: FileExpiredEvent["kind"]; taskId: string | null } | undefined {
  const [prefix, userId, taskId] = key.split("/");
  if (!userId) return undefined;
  if (prefix === "uploads") return { userId, kind: "upload", taskId: null };
  if (prefix === "outputs" && taskId) return { userId, kind: "output", taskId };
  return undefined;
}

/** The same for every attempt and every endpoint: a key names one file, which expires once. */
async function fileEventId(key: string): Promise<string> {
  return `msg_file_${toHex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key))).slice(0, 32)}`;
}

/**
 * Sends `file.expired` for each key the file sweep deleted to its owner's endpoints subscribed
 * to it. Best effort, as the sweep itself: a fan-out that fails is logged, not retried (the
 * file is gone and its row with it). Returns how many hand-overs were made.
 */
export async function announceExpiredFiles(env: Env, keys: readonly string[], now = new Date()): Promise<number> {
  let handed = 0;
  const subscribers = new Map<string, Promise<boolean>>();
  const subscribed = (userId: string) => {
    if (!subscribers.has(userId)) subscribers.set(userId, subscribedEndpoints(env.DB, userId, "file.expired").then((ids) => ids.length > 0));
    return subscribers.get(userId)!;
  };
  for (const key of keys) {
    const file = describeKey(key);
    if (!file || !(await subscribed(file.userId))) continue;
    const body: FileExpiredEvent = { key, kind: file.kind, task_id: file.taskId, expired_at: now.toISOString() };
    const event = { user_id: file.userId, task_id: null, id: await fileEventId(key), type: "file.expired" as const, body: JSON.stringify(body) };
    await fanOutToEndpoints(env, event, now).then((count) => (handed += count), (error) => log.error("file.expired fan-out failed", { key, error }));
  }
  return handed;
}
