import { randomHex } from "../../shared/api-keys";
import { config } from "../lib/config";

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

/**
 * Production sends through Cloudflare Email Service (the `send_email` binding EMAIL, declared
 * in wrangler.toml [env.production]); https://developers.cloudflare.com/email-service/api/send-emails/workers-api/
 * Everywhere else the mail lands in the development outbox, where tests and `npm start` read it.
 */
export async function sendMail(env: Env, mail: Mail, now = new Date()): Promise<void> {
  if (config(env).production) {
    if (!env.EMAIL) throw new Error("The EMAIL send_email binding is missing from [env.production].");
    await env.EMAIL.send({ from: env.MAIL_FROM, to: mail.to, subject: mail.subject, text: mail.text });
    return;
  }
  await env.DB.prepare("INSERT INTO dev_outbox (id, to_address, subject, text, created_at) VALUES (?, ?, ?, ?, ?)")
    .bind(`msg_${randomHex(12)}`, mail.to, mail.subject, mail.text, now.toISOString())
    .run();
}

/** The newest development mails, optionally only those to one address. */
export async function readOutbox(db: D1Database, to?: string): Promise<OutboxMessage[]> {
  const statement = to
    ? db.prepare("SELECT * FROM dev_outbox WHERE to_address = ? ORDER BY created_at DESC, rowid DESC LIMIT 50").bind(to.toLowerCase())
    : db.prepare("SELECT * FROM dev_outbox ORDER BY created_at DESC, rowid DESC LIMIT 50");
  const { results } = await statement.all<{ id: string; to_address: string; subject: string; text: string; created_at: string }>();
  return results.map((row) => ({ id: row.id, to: row.to_address, subject: row.subject, text: row.text, links: row.text.match(/https?:\/\/\S+/g) ?? [], created_at: row.created_at }));
}
