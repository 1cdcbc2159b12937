import { AppError } from "../../shared/errors";
import type { OutputDestination, RedeliveryResult, TaskDestination } from "../../shared/schemas/destinations";
import { DELIVERY_TIMEOUT_MS, deliverObject, deliveryKey, destinationOfUser } from "../destinations/deliver";
import { findDestination } from "../destinations/repository";
import { purgeCached } from "../files/cdn-cache";
import { deleteFile } from "../files/records";
import { isServed } from "../files/served-files";
import { config } from "../lib/config";
import { log } from "../lib/log";
import { taskStub } from "../lib/stubs";
import { outputKey } from "./outputs";
import { requireOwnTask, updateFinishedOutputs } from "./repository";
import { type LiveState, type StoredOutput, isFinal } from "./state";

/** Where an output went, as kept on the task's outputs (`mode` is ours: the API shows the rest). */
export type StoredDelivery = OutputDestination & { mode: TaskDestination["mode"] };
export type DeliveredOutput = StoredOutput & { destination?: StoredDelivery };

/** One output's delivery in the task object's storage. */
interface DeliveryEntry {
  filename: string;
  delivery: StoredDelivery;
  /** When the next attempt is due (epoch ms). */
  due_at: number;
}

const PLAN_KEY = "delivery-plan";
const ENTRIES_KEY = "deliveries";
/** Refusals that another attempt cannot change. */
const FINAL_CODES = new Set(["DESTINATION_NOT_FOUND", "URL_HOST_BLOCKED", "URL_NOT_ALLOWED", "OUTPUT_MISSING", "OUTPUT_EXPIRED"]);

/**
 * A task's deliveries to its destination, kept in its object's storage and driven by its alarm,
 * so they survive an evicted object or a restarted Worker. The task is `completed` as soon as its
 * outputs are in R2 (FFHub's clients stop polling then, and its webhook fires with each output's
 * destination `pending`); each output is then streamed from R2 to the destination, with the
 * pauses of DESTINATION_RETRY_SCHEDULE_SECONDS between attempts (one attempt more than pauses),
 * and its `destination` on the task's record (D1) says how it went. An attempt is counted
 * before it starts, so an attempt cut short by an eviction counts too and nothing is retried
 * forever.
 */
export class TaskDeliveries {
  constructor(private readonly storage: DurableObjectStorage) {}

  keepPlan(plan: TaskDestination): Promise<void> {
    return this.storage.put(PLAN_KEY, plan);
  }

  /** The destination the task named, as its record keeps it too: its events show it as GET does. */
  plan(): Promise<TaskDestination | undefined> {
    return this.storage.get<TaskDestination>(PLAN_KEY);
  }

  /**
   * The ended task with each output's delivery `pending` (or `failed` if its destination is gone),
   * and the storage entries to put with the end. Nothing for a task that did not complete or
   * named no destination.
   */
  async atEnd(env: Env, state: LiveState): Promise<{ state: LiveState; entries: Record<string, DeliveryEntry[]>; plan?: TaskDestination }> {
    const plan = await this.plan();
    if (!plan || state.status !== "completed" || !state.outputs?.length) return { state, entries: {}, plan };
    const row = await destinationOfUser(env.DB, state.user_id, plan.id).catch((error: unknown) => {
      if (error instanceof AppError) return error;
      throw error;
    });
    const now = Date.now();
    const entries = state.outputs.map((output): DeliveryEntry => {
      const delivery: StoredDelivery = row instanceof AppError
        ? { id: plan.id, status: "failed", key: "", attempts: 0, error: row.detail, error_code: row.code, mode: plan.mode }
        : { id: row.id, status: "pending", key: deliveryKey(row, state.task_id, output.filename), attempts: 0, mode: plan.mode };
      return { filename: output.filename, delivery, due_at: now };
    });
    return { state: { ...state, outputs: withDeliveries(state.outputs, entries) }, entries: { [ENTRIES_KEY]: entries }, plan };
  }

  /** When the alarm should ring for the next attempt, if one is due. */
  async retryAt(): Promise<number | undefined> {
    const due = ((await this.storage.get<DeliveryEntry[]>(ENTRIES_KEY)) ?? []).filter((entry) => entry.delivery.status === "pending").map((entry) => entry.due_at);
    return due.length ? Math.min(...due) : undefined;
  }

  /** Sets the alarm for the next due attempt, unless it already rings sooner. */
  async arm(): Promise<void> {
    const at = await this.retryAt();
    if (at === undefined) return;
    const current = await this.storage.getAlarm();
    if (current === null || current > at) await this.storage.setAlarm(at);
  }

  /**
   * Makes every due attempt, one output at a time (streamed R2 → destination), then sets the
   * alarm for the next. Entries are read afresh around each attempt, which awaits the network.
   */
  async run(env: Env, state: LiveState | undefined): Promise<void> {
    if (!state || state.status !== "completed" || !state.outputs) return;
    for (;;) {
      const entries = (await this.storage.get<DeliveryEntry[]>(ENTRIES_KEY)) ?? [];
      const due = entries.find((entry) => entry.delivery.status === "pending" && entry.due_at <= Date.now());
      if (!due) break;
      const attempts = due.delivery.attempts + 1;
      // Should this attempt be cut short (an evicted object), the alarm makes the next one once it would have timed out.
      await this.save({ ...due, delivery: { ...due.delivery, attempts }, due_at: Date.now() + DELIVERY_TIMEOUT_MS + retryDelay(env, attempts) });
      await this.arm();
      const after = await attempt(env, state, { ...due, delivery: { ...due.delivery, attempts } });
      const saved = await this.save({ ...due, delivery: after, due_at: Date.now() + retryDelay(env, attempts) });
      await updateFinishedOutputs(env.DB, state.task_id, withDeliveries(state.outputs, saved));
    }
    await this.arm();
  }

  /**
   * Fresh attempts for the outputs whose delivery `failed` and whose copy here has not expired
   * (the others are named in `expired`):
   * each goes back to `pending`, its attempts counted from 0, to the destination as it is stored
   * now (its credentials and prefix), and the alarm rings for them at once. A refusal is
   * returned, not thrown: it crosses the object's RPC boundary as data.
   */
  async redeliver(env: Env, state: LiveState | undefined): Promise<Redelivery> {
    const entries = (await this.storage.get<DeliveryEntry[]>(ENTRIES_KEY)) ?? [];
    const failed = entries.filter((entry) => entry.delivery.status === "failed");
    if (!state || state.status !== "completed" || !state.outputs || !failed.length) {
      const pending = entries.some((entry) => entry.delivery.status === "pending");
      return refused("NOTHING_TO_REDELIVER", entries.length === 0 ? "it completed without a destination, or did not complete" : pending ? "its deliveries are still being attempted" : "every output was delivered");
    }
    const stored = await servedOutputs(env, state, failed);
    const expired = failed.filter((entry) => !stored.includes(entry)).map((entry) => entry.filename);
    if (!stored.length) return refused("NOTHING_TO_REDELIVER", "the outputs whose delivery failed are no longer stored here (expired or deleted)", { expired });
    const plan = (await this.storage.get<TaskDestination>(PLAN_KEY))!;
    const row = await findDestination(env.DB, state.user_id, plan.id);
    if (!row) return { ok: false, code: "DESTINATION_GONE", detail: `Its destination '${plan.id}' has been deleted since; there is nowhere to deliver to.`, extra: { destination: plan.id } };
    const now = Date.now();
    const fresh = new Map(stored.map((entry) => [entry.filename, { filename: entry.filename, delivery: { id: row.id, status: "pending", key: deliveryKey(row, state.task_id, entry.filename), attempts: 0, mode: plan.mode }, due_at: now } satisfies DeliveryEntry]));
    const next = entries.map((entry) => fresh.get(entry.filename) ?? entry);
    await this.storage.put(ENTRIES_KEY, next);
    await updateFinishedOutputs(env.DB, state.task_id, withDeliveries(state.outputs, next));
    await this.arm();
    return { ok: true, queued: [...fresh.values()].map(({ filename, delivery: { mode: _mode, ...destination } }) => ({ filename, destination })), ...(expired.length ? { expired } : {}) };
  }

  /** Replaces one output's entry; returns them all. */
  private async save(entry: DeliveryEntry): Promise<DeliveryEntry[]> {
    const entries = ((await this.storage.get<DeliveryEntry[]>(ENTRIES_KEY)) ?? []).map((candidate) => (candidate.filename === entry.filename ? entry : candidate));
    await this.storage.put(ENTRIES_KEY, entries);
    return entries;
  }
}

async function attempt(env: Env, state: LiveState, entry: DeliveryEntry): Promise<StoredDelivery> {
  const { delivery } = entry;
  const sourceKey = outputKey(state.user_id, state.task_id, entry.filename);
  try {
    const object = await env.FILES.get(sourceKey);
    if (!object) throw new AppError("NOT_FOUND", `The output '${entry.filename}' is no longer stored here (expired or deleted), so it cannot be delivered.`);
    // R2's lifecycle deletes an expired object up to a day late: its expiry, not its presence, decides.
    if (!(await isServed(env, sourceKey))) {
      await object.body.cancel();
      throw new AppError("OUTPUT_EXPIRED", `The output '${entry.filename}' expired here before it could be delivered; run the task again to deliver a fresh copy.`);
    }
    const url = await deliverObject(env, state.user_id, delivery.id, delivery.key, { stream: object.body, length: object.size, contentType: object.httpMetadata?.contentType ?? "application/octet-stream" });
    if (delivery.mode === "only") {
      await deleteFile(env, { key: sourceKey, user_id: state.user_id });
      await purgeCached(env, [sourceKey]);
    }
    const { error: _error, error_code: _code, ...rest } = delivery;
    return { ...rest, status: "delivered", url };
  } catch (error) {
    const known = error instanceof AppError ? error : undefined;
    const code = known?.code === "NOT_FOUND" ? "OUTPUT_MISSING" : (known?.code ?? "DESTINATION_UNREACHABLE");
    if (!known) log.error("delivery attempt failed", { task_id: state.task_id, filename: entry.filename, error });
    const giveUp = FINAL_CODES.has(code) || delivery.attempts > config(env).destinationRetryScheduleSeconds.length;
    return { ...delivery, status: giveUp ? "failed" : "pending", error: known?.detail ?? "The delivery failed unexpectedly.", error_code: code };
  }
}

/** What a redelivery did: the outputs it queued, or why it queued none (an AppError's parts). */
export type Redelivery =
  | { ok: true; queued: RedeliveryResult["queued"]; expired?: string[] }
  | { ok: false; code: "NOTHING_TO_REDELIVER" | "DESTINATION_GONE"; detail: string; extra?: Record<string, string | string[]> };

function refused(code: "NOTHING_TO_REDELIVER", why: string, extra?: Record<string, string[]>): Redelivery {
  return { ok: false, code, detail: `There is nothing to redeliver: ${why}.`, ...(extra ? { extra } : {}) };
}

/** The entries whose output the CDN still serves: in R2 and not past its expiry (edge/files/served-files.ts). */
async function servedOutputs(env: Env, state: LiveState, entries: readonly DeliveryEntry[]): Promise<DeliveryEntry[]> {
  const kept = await Promise.all(entries.map(async (entry) => ((await isServed(env, outputKey(state.user_id, state.task_id, entry.filename))) ? entry : undefined)));
  return kept.filter((entry) => entry !== undefined);
}

/**
 * POST /v1/tasks/{task_id}/deliveries/retry: the user's finished task's failed deliveries, made
 * again by its object. TASK_NOT_FINISHED before the task has ended; NOTHING_TO_REDELIVER when no
 * delivery failed or the outputs are gone; DESTINATION_GONE when its destination was deleted.
 */
export async function redeliverOutputs(env: Env, userId: string, taskId: string): Promise<RedeliveryResult> {
  const row = await requireOwnTask(env.DB, userId, taskId);
  if (!isFinal(row.status)) throw new AppError("TASK_NOT_FINISHED", `Task '${taskId}' is ${row.status}; its outputs are delivered once it completes.`);
  const result: Redelivery = await taskStub(env, taskId).redeliver();
  if (!result.ok) throw new AppError(result.code, `Task '${taskId}': ${result.detail}`, result.extra);
  return { task_id: taskId, queued: result.queued, ...(result.expired ? { expired: result.expired } : {}) };
}

/** The task's outputs, each with its delivery. */
function withDeliveries(outputs: readonly StoredOutput[], entries: readonly DeliveryEntry[]): DeliveredOutput[] {
  return outputs.map((output) => {
    const entry = entries.find((candidate) => candidate.filename === output.filename);
    return entry ? { ...output, destination: entry.delivery } : output;
  });
}

function retryDelay(env: Env, attempts: number): number {
  const pauses = config(env).destinationRetryScheduleSeconds;
  return pauses[Math.min(attempts, pauses.length) - 1]! * 1000;
}

/** The sooner of two alarm times, either of which may be absent. */
export function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}
