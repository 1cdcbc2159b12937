import { z } from "zod";

/**
 * The jobs queue's one message: which task to dispatch. It carries no state: the task's
 * Durable Object decides what the task needs, so a message that is duplicated, late or lost
 * changes nothing (the object's own alarm sends another when one is lost). Delivered at
 * least once; produced only by `queueJobs` (edge/dispatch/jobs-queue.ts).
 */
export const JobMessageSchema = z.object({ task_id: z.string().min(1) });
export type JobMessage = z.infer<typeof JobMessageSchema>;
