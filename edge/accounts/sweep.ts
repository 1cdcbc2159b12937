import { USER_HAS_FILES } from "../files/records";
import { USER_HAS_API_KEYS } from "./api-keys";
import { sweepOutboxBefore } from "./mail";
import { USER_HAS_MAIL_TOKENS, sweepExpiredMailTokens } from "./mail-tokens";
import { sweepExpiredSessions } from "./sessions";
import { sweepEndedWindows } from "./signin-limits";
import { deleteUnconfirmedUsersStatement } from "./users";

const DAY_MS = 24 * 60 * 60 * 1000;
/** A sign-up nobody confirmed within this long is forgotten (its link lived 24 h). */
const UNVERIFIED_TTL_MS = 7 * DAY_MS;
const OUTBOX_TTL_MS = 7 * DAY_MS;

/**
 * What the sweep must know of the tasks, from their owner (edge/tasks/repository.ts's
 * USER_HAS_TASKS): accounts never import the core, so the caller hands it over.
 */
export interface SweepTasks {
  /** An SQL condition on `users` (aliased `users`): the user has a task. */
  userHasTasks: string;
}

/**
 * Cron: drops what the accounts leave behind once it can no longer be used: expired sessions and
 * mail tokens, ended sign-in windows, old development mails, and sign-ups never confirmed (users
 * without a password, key, mailed link, task or file).
 */
export async function sweepAccountRecords(env: Env, tasks: SweepTasks, now = new Date()): Promise<Record<string, number>> {
  const db = env.DB;
  const [sessions, tokens, failures, outbox] = await db.batch([
    sweepExpiredSessions(db, now),
    sweepExpiredMailTokens(db, now),
    sweepEndedWindows(db, now),
    sweepOutboxBefore(db, new Date(now.getTime() - OUTBOX_TTL_MS)),
  ]);
  const holdings = [USER_HAS_API_KEYS, USER_HAS_MAIL_TOKENS, tasks.userHasTasks, USER_HAS_FILES];
  const unconfirmed = await deleteUnconfirmedUsersStatement(db, new Date(now.getTime() - UNVERIFIED_TTL_MS).toISOString(), holdings).run();
  const changes = (result: D1Result | undefined) => result?.meta.changes ?? 0;
  return { sessions: changes(sessions), mail_tokens: changes(tokens), signin_failures: changes(failures), dev_outbox: changes(outbox), unconfirmed_users: changes(unconfirmed) };
}
