import { env } from "cloudflare:test";
import { findTaskById, insertTask, markFinished } from "../../../edge/tasks/repository";
import { handoverFor } from "../../../edge/tasks/webhook-event";
import { deliverOnce, listDeliveries } from "../../../edge/webhooks/delivery";
import type { WebhookDelivery, WebhookHandover } from "../../../shared/schemas/webhooks";
import { originUrl } from "../files/fixtures";
import { originPaths } from "../files/origin";
import { createUser } from "../helpers";

export interface ReceivedRequest {
  method: string;
  headers: Record<string, string>;
  body: string;
}

/** A unique receiver name on the origin server, so tests never read each other's requests. */
export function receiverName(): string {
  return `r${crypto.randomUUID().replaceAll("-", "")}`;
}

export function hookUrl(name: string, status = 200, location?: string): string {
  return originUrl(originPaths.hook(name, status, location));
}

export async function received(name: string): Promise<ReceivedRequest[]> {
  return (await fetch(originUrl(originPaths.hookLog(name)))).json();
}

/**
 * A task that has already ended, written straight to D1 (no Durable Object, so no webhook is
 * handed over by itself): the tests hand its event over by hand.
 */
export async function endedTask(webhookUrl: string | null, status: "completed" | "failed" = "failed", user?: { userId: string; key: string }) {
  const owner = user ?? (await createUser());
  const taskId = `tsk_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
  const createdAt = new Date(Date.now() - 5_000).toISOString();
  await insertTask(env.DB, { id: taskId, user_id: owner.userId, command: "ffmpeg -i https://example.com/a.mp4 out.mp4", with_metadata: 0, webhook_url: webhookUrl, created_at: createdAt });
  await markFinished(env.DB, taskId, {
    status,
    progress: status === "completed" ? 100 : 0,
    outputs: status === "completed" ? [{ filename: "out.mp4", size: 1234 }] : null,
    error: status === "failed" ? "ffmpeg exited with code 1" : null,
    error_code: status === "failed" ? "FFMPEG_FAILED" : null,
    started_at: createdAt,
    finished_at: new Date().toISOString(),
  });
  return { taskId, userId: owner.userId, key: owner.key };
}

/** The hand-over of an ended task's event, built from its D1 record as the redelivery route builds it. */
export async function handover(taskId: string, overrides: Partial<WebhookHandover> = {}): Promise<WebhookHandover> {
  const row = await findTaskById(env.DB, taskId);
  const built = handoverFor(env, row!, false);
  if (!built) throw new Error(`task ${taskId} has no end event to hand over`);
  return { ...built, ...overrides };
}

/** One attempt, as a receiver's object makes it, for the `attempts`-th time; says whether a retry follows. */
export async function deliver(body: WebhookHandover, attempts = 1, workerEnv: Env = env): Promise<{ retried: boolean }> {
  const { retryAfterSeconds } = await deliverOnce(workerEnv, body, attempts);
  return { retried: retryAfterSeconds !== undefined };
}

/** Polls the task's delivery log until `done` holds (deliveries made by the receivers' own objects). */
export async function waitForDeliveries(taskId: string, done: (deliveries: WebhookDelivery[]) => boolean, timeoutMs = 10_000): Promise<WebhookDelivery[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const deliveries = await listDeliveries(env.DB, taskId);
    if (done(deliveries)) return deliveries;
    if (Date.now() > deadline) throw new Error(`deliveries of ${taskId} never matched: ${JSON.stringify(deliveries)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
