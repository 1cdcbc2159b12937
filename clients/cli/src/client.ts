import { FFedge } from "../../sdk/src/index";
import { type Credentials, credentials } from "./config";
import { UsageError, missingKey } from "./errors";

export interface GlobalOptions {
  url?: string;
  debug?: boolean;
}

/** The service URL as given, checked: a typo should fail here, not as a network error later. */
export function checkedUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError("Invalid URL", `${JSON.stringify(url)} is not a URL (e.g. https://api.example.com)`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new UsageError("Invalid URL", `${url} must be http(s)`);
  if (parsed.username || parsed.password || parsed.search) throw new UsageError("Invalid URL", "the service URL carries no credentials or query: the key goes in the config or FFEDGE_API_KEY");
  return url.replace(/\/+$/, "");
}

export async function connect(options: GlobalOptions): Promise<{ ff: FFedge; credentials: Credentials }> {
  const found = await credentials({ url: options.url });
  if (!found.apiKey) throw missingKey();
  const baseUrl = checkedUrl(found.url);
  return { ff: new FFedge({ apiKey: found.apiKey, baseUrl }), credentials: { ...found, url: baseUrl } };
}
