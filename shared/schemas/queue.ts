import { z } from "zod";

/**
 * The jobs queue's one message: which task to dispatch, and the two facts the consumer needs
 * before it asks the task's Durable Object: whose running-task line the task joins, and its
 * place in that line (submission order). Everything else the dispatch needs is the object's
 * own state, so a message that is duplicated, late or lost changes nothing (the object's own
 * alarm sends another when one is lost). Delivered at least once; produced only by `queueJobs`
 * (edge/dispatch/dispatcher.ts).
 */
export const JobMessageSchema = z.object({
  task_id: z.string().min(1),
  user_id: z.string().min(1),
  created_at: z.iso.datetime(),
});
export type JobMessage = z.infer<typeof JobMessageSchema>;
