/** The development outbox: locally no mail is sent, the console's mails land here. */
export const OUTBOX_PATH = "/console/api/dev/outbox";
const OUTBOX_TIMEOUT_MS = 5_000;

interface OutboxMessage {
  id: string;
  to: string;
  subject: string;
  links: string[];
}

/**
 * Prints the mails of the development outbox (GET /console/api/dev/outbox) not printed yet:
 * locally nothing is sent, so this is where a new user finds the verification or reset link.
 * Returns false when the edge did not answer.
 */
export async function printNewMail(edgeUrl: string, seen: Set<string>, write: (text: string) => void): Promise<boolean> {
  try {
    const response = await fetch(`${edgeUrl}${OUTBOX_PATH}`, { signal: AbortSignal.timeout(OUTBOX_TIMEOUT_MS) });
    if (!response.ok) return false;
    const { messages } = (await response.json()) as { messages: OutboxMessage[] };
    for (const message of messages.toReversed()) {
      if (seen.has(message.id)) continue;
      seen.add(message.id);
      write([`[mail] to ${message.to}: ${message.subject}`, ...message.links.map((link) => `  ${link}`), ""].join("\n"));
    }
    return true;
  } catch {
    return false;
  }
}

/** Prints each new mail of the outbox at `edgeUrl` every second until `isStopped`. */
export async function watchOutbox(edgeUrl: string, isStopped: () => boolean): Promise<void> {
  const seen = new Set<string>();
  // Mails from earlier runs were printed then: only new ones are shown.
  await printNewMail(edgeUrl, seen, () => {});
  while (!isStopped()) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await printNewMail(edgeUrl, seen, (text) => process.stdout.write(text));
  }
}
