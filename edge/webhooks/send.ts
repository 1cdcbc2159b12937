import { AppError } from "../../shared/errors";
import { config } from "../lib/config";
import { guardedFetch } from "../lib/guarded-fetch";
import type { TaskEvent } from "./event";
import { signedHeaders } from "./signing";
import { checkWebhookUrl } from "./url";

const USER_AGENT = "ffedge-webhooks/1";

export interface AttemptOutcome {
  statusCode: number | null;
  latencyMs: number | null;
  success: boolean;
  error: string | null;
  /** The URL itself is refused: retrying cannot help. */
  refused: boolean;
}

/**
 * One POST of an event. Only a 2xx counts; a 3xx is a failure and is never followed (a
 * redirect could point anywhere, including at addresses the URL policy blocks). The URL is
 * checked again here because the policy may have changed since the task was submitted.
 * `secrets` is only called once the URL has passed, so a refused URL creates no secret.
 */
export async function sendEvent(env: Env, rawUrl: string, event: TaskEvent, secrets: () => Promise<string[]>): Promise<AttemptOutcome> {
  const settings = config(env);
  let url: URL;
  try {
    url = checkWebhookUrl(rawUrl, settings.devFetchAllowHosts);
  } catch (error) {
    if (error instanceof AppError) return { statusCode: null, latencyMs: null, success: false, error: `${error.code}: ${error.detail}`, refused: true };
    throw error;
  }
  const headers = { ...signedHeaders(await secrets(), event.id, event.body, new Date()), "webhook-event": event.type, "content-type": "application/json", "user-agent": USER_AGENT };
  const started = Date.now();
  try {
    const { response } = await guardedFetch(env, url.toString(), { method: "POST", headers, body: event.body, timeoutMs: settings.webhookTimeoutSeconds * 1000, followRedirects: false });
    await response.body?.cancel();
    const latencyMs = Date.now() - started;
    if (response.status >= 200 && response.status < 300) return { statusCode: response.status, latencyMs, success: true, error: null, refused: false };
    return { statusCode: response.status, latencyMs, success: false, error: describeStatus(response.status), refused: false };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { statusCode: null, latencyMs: Date.now() - started, success: false, error: `${error.code}: ${error.detail}`, refused: error.status === 400 };
  }
}

function describeStatus(status: number): string {
  if (status >= 300 && status < 400) return `The receiver answered ${status}; redirects are not followed.`;
  return `The receiver answered ${status}; only 2xx counts as delivered.`;
}
