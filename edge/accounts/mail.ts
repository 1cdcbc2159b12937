import { randomHex } from "../../shared/encoding";
import { AppError } from "../../shared/errors";
import { config } from "../lib/config";
import { log } from "../lib/log";
import { parseMailFrom } from "../lib/mail-from";

export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export interface OutboxMessage extends Mail {
  id: string;
  links: string[];
  created_at: string;
}

/** What a mail is for: named in the failure log, never the recipient. */
export type MailPurpose = "verify" | "already-registered" | "reset" | "no-account";

/**
 * Email Service errors that mean the account's sending quota is spent (an hourly and a daily
 * limit on new accounts): asking again within the hour is pointless.
 * https://developers.cloudflare.com/email-service/api/send-emails/workers-api/#error-codes
 */
const QUOTA_ERRORS = new Set(["E_RATE_LIMIT_EXCEEDED", "E_DAILY_LIMIT_EXCEEDED"]);
const RETRY_AFTER_QUOTA_SECONDS = 3600;
const RETRY_AFTER_SECONDS = 60;

/**
 * Production sends through Cloudflare Email Service (the `send_email` binding EMAIL, declared
 * in wrangler.toml [env.production]) and waits for its answer: a mail that was not sent is
 * 503 MAIL_NOT_SENT with Retry-After, logged as `{"msg":"mail not sent"}` (Workers Logs count
 * it by that msg). Everywhere else the mail lands in the development outbox, where tests and
 * `npm start` read it.
 */
export async function sendMail(env: Env, mail: Mail & { purpose: MailPurpose }, now = new Date()): Promise<void> {
  if (config(env).production) {
    await sendThroughEmailService(env, mail);
    return;
  }
  await env.DB.prepare("INSERT INTO dev_outbox (id, to_address, subject, text, created_at) VALUES (?, ?, ?, ?, ?)")
    .bind(`msg_${randomHex(12)}`, mail.to, mail.subject, mail.text, now.toISOString())
    .run();
}

async function sendThroughEmailService(env: Env, mail: Mail & { purpose: MailPurpose }): Promise<void> {
  // MAIL_FROM was checked at start (configProblems); a display name goes as { email, name },
  // the binding's documented form, a bare address as the string it also takes:
  // https://developers.cloudflare.com/email-service/api/send-emails/workers-api/#send-method
  const sender = parseMailFrom(env.MAIL_FROM);
  try {
    if (!env.EMAIL) throw Object.assign(new Error("The EMAIL send_email binding is missing from [env.production]."), { code: "BINDING_MISSING" });
    if (!sender) throw Object.assign(new Error("MAIL_FROM is not an address."), { code: "MAIL_FROM_INVALID" });
    const from = sender.name ? { email: sender.email, name: sender.name } : sender.email;
    await env.EMAIL.send({ from, to: mail.to, subject: mail.subject, text: mail.text });
  } catch (error) {
    // Errors carry a `code` (same page, "Error handling").
    const code = typeof (error as { code?: unknown })?.code === "string" ? (error as { code: string }).code : "UNKNOWN";
    log.error("mail not sent", { purpose: mail.purpose, code, error });
    const retryAfter = QUOTA_ERRORS.has(code) ? RETRY_AFTER_QUOTA_SECONDS : RETRY_AFTER_SECONDS;
    throw new AppError("MAIL_NOT_SENT", `The mail could not be sent; try again in ${retryAfter} s.`, { retry_after: retryAfter }).withHeaders({ "Retry-After": String(retryAfter) });
  }
}

/** The newest development mails, optionally only those to one address. */
export async function readOutbox(db: D1Database, to?: string): Promise<OutboxMessage[]> {
  const statement = to
    ? db.prepare("SELECT * FROM dev_outbox WHERE to_address = ? ORDER BY created_at DESC, rowid DESC LIMIT 50").bind(to.toLowerCase())
    : db.prepare("SELECT * FROM dev_outbox ORDER BY created_at DESC, rowid DESC LIMIT 50");
  const { results } = await statement.all<{ id: string; to_address: string; subject: string; text: string; created_at: string }>();
  return results.map((row) => ({ id: row.id, to: row.to_address, subject: row.subject, text: row.text, links: row.text.match(/https?:\/\/\S+/g) ?? [], created_at: row.created_at }));
}

/** Development mails written before `before` (the cron sweep); a statement, for batches. */
export function sweepOutboxBefore(db: D1Database, before: Date): D1PreparedStatement {
  return db.prepare("DELETE FROM dev_outbox WHERE created_at <= ?").bind(before.toISOString());
}
