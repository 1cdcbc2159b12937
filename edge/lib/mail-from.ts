/** The sender of account mail, as the `send_email` binding takes it: an address, with a display name or without. */
export interface MailSender {
  email: string;
  name?: string;
}

// Deliberately narrower than RFC 5322: the sender is the operator's own address, and an
// unusual one is more likely a typo than a need.
const ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63})$/;
const NAMED = /^\s*(?:"([^"\\\r\n]*)"|([^<>"\r\n]*?))\s*<([^<>\s]+)>\s*$/;

/**
 * Reads MAIL_FROM: `Name <address@domain>`, `"Name" <address@domain>` or a bare address; null
 * when it is neither. The domain ends in letters, so an IP literal is never one.
 */
export function parseMailFrom(value: string | undefined): (MailSender & { domain: string }) | null {
  const text = (value ?? "").trim();
  const named = NAMED.exec(text);
  const address = named ? named[3]! : text;
  const match = ADDRESS.exec(address);
  if (!match) return null;
  const name = (named?.[1] ?? named?.[2] ?? "").trim();
  return { email: address, ...(name ? { name } : {}), domain: match[1]!.toLowerCase() };
}
