import ipaddr from "ipaddr.js";
import { AppError } from "../errors";

/** Names that resolve to internal services on common platforms, blocked before any lookup. */
const BLOCKED_NAMES = [/^localhost$/, /\.localhost$/, /^metadata(\.google)?\.internal$/, /\.internal$/, /\.local$/, /^metadata$/, /\.home\.arpa$/, /^instance-data$/];

export interface UrlPolicyOptions {
  /** Test/dev-only hosts (names or literal IPs) that may be private. Empty in production. */
  allowHosts?: readonly string[];
}

/**
 * Checks a URL a stranger gave us before anything is fetched: http(s) only, default ports,
 * no credentials, and no host that names or is a non-public address.
 */
export function checkFetchUrl(raw: string, options: UrlPolicyOptions = {}): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError("URL_NOT_ALLOWED", `'${truncate(raw)}' is not a valid absolute URL.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new AppError("URL_NOT_ALLOWED", `Only http and https URLs are allowed, not '${url.protocol}'.`);
  }
  if (url.username || url.password) throw new AppError("URL_NOT_ALLOWED", "URLs with credentials are not allowed.");
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  const allowed = options.allowHosts?.includes(host) ?? false;
  if (url.port !== "" && !allowed) {
    throw new AppError("URL_NOT_ALLOWED", `Only the default port of ${url.protocol.slice(0, -1)} is allowed, not ${url.port}.`);
  }
  if (allowed) return url;
  if (ipaddr.isValid(host)) {
    if (isBlockedAddress(host)) throw blockedHost(host);
  } else if (BLOCKED_NAMES.some((pattern) => pattern.test(host)) || !host.includes(".")) {
    throw blockedHost(host);
  }
  return url;
}

/** True for every address that is not plain public unicast (loopback, private, link-local, CGNAT, ULA, multicast, ...). */
export function isBlockedAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return true;
  }
  if (parsed.kind() === "ipv6") {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return isBlockedAddress(v6.toIPv4Address().toString());
    // IPv4-compatible (::a.b.c.d), NAT64 and 6to4 addresses embed an IPv4 address.
    const range = v6.range();
    if (range === "rfc6052" || range === "6to4" || range === "teredo") return true;
    const parts = v6.parts;
    if (parts.slice(0, 6).every((part) => part === 0)) return true;
    return range !== "unicast";
  }
  return parsed.range() !== "unicast";
}

export function blockedHost(host: string): AppError {
  return new AppError("URL_HOST_BLOCKED", `The host '${truncate(host)}' is not a public internet address and cannot be fetched.`);
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
