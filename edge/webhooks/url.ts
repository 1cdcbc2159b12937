import { AppError } from "../../shared/errors";
import { checkFetchUrl } from "../../shared/net/url-policy";

/**
 * A webhook URL must pass the guarded fetcher's policy and use https: event bodies carry
 * output URLs and errors, and must not cross the network in clear. Plain http is left only to
 * the development allow-list (a receiver on 127.0.0.1 in tests), which is empty in production.
 */
export function checkWebhookUrl(raw: string, allowHosts: readonly string[]): URL {
  const url = checkFetchUrl(raw, { allowHosts });
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (url.protocol !== "https:" && !allowHosts.includes(host)) {
    throw new AppError("URL_NOT_ALLOWED", "Webhook URLs must use https.");
  }
  return url;
}
