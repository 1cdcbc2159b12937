import ipaddr from "ipaddr.js";
import { parse as parseDomain } from "tldts";
import { AppError } from "../errors";

export interface UrlPolicyOptions {
  /** Test/dev-only hosts (names or literal IPs, written exactly so) that may be private, on any port. Empty in production. */
  allowHosts?: readonly string[];
}

/**
 * Checks a URL a stranger gave us, before anything is fetched: everything that can be decided
 * without DNS. http(s) only, written with `//`; no credentials (`good.com@evil`, even encoded);
 * default ports; address literals only in plain dotted decimal (the WHATWG parser turns
 * `0x7f.1`, `0177.0.0.1`, `2130706433`, `127.1` and full-width digits into 127.0.0.1, so the
 * written form and the parsed one are both judged); no address that is not public unicast;
 * no name outside the public suffix list (`.internal`, `.local`, single labels...). What a
 * public-looking name resolves to is checked at connect time by each runtime's fetcher.
 * Task inputs, /api/upload/url, webhooks and every redirect hop all pass through here.
 */
export function checkFetchUrl(raw: string, options: UrlPolicyOptions = {}): URL {
  if (/[\u0000-\u0020\u007f]/.test(raw)) throw notAllowed(raw, "contains whitespace or control characters");
  const written = /^(https?):\/\/([^/?#\\]*)/i.exec(raw);
  if (!written) throw notAllowed(raw, "is not an http(s) URL of the form http(s)://host/path");
  const authority = written[2]!;
  if (authority.includes("@")) throw notAllowed(raw, "carries credentials ('user@host'), which are not allowed");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw notAllowed(raw, "is not a valid absolute URL");
  }
  if (url.username || url.password) throw notAllowed(raw, "carries credentials ('user@host'), which are not allowed");
  const host = hostOf(url);
  const allowed = options.allowHosts?.includes(host) === true && writtenHost(authority).toLowerCase().replace(/\.$/, "") === host;
  if (allowed) return url;
  if (url.port !== "") throw notAllowed(raw, `uses port ${url.port}; only the default port of ${url.protocol.slice(0, -1)} is allowed`);
  const why = hostProblem(host);
  if (why) throw new AppError("URL_HOST_BLOCKED", `The host '${truncate(host)}' ${why}, and cannot be fetched.`, { token: truncate(raw) });
  checkWrittenHost(raw, writtenHost(authority), host);
  return url;
}

/** Why a host (an address or a name, without brackets or trailing dot) is never fetched; undefined if it may be. */
export function hostProblem(host: string): string | undefined {
  if (ipaddr.IPv4.isValidFourPartDecimal(host) || (host.includes(":") && ipaddr.IPv6.isValid(host))) {
    const range = blockedRange(host);
    return range === undefined ? undefined : `is not a public internet address (${range})`;
  }
  if (!host.includes(".")) return "is a single-label name, which only resolves inside a private network";
  const domain = parseDomain(host, { allowPrivateDomains: false });
  if (domain.isIp) return "is not an address in plain dotted decimal";
  if (!domain.isIcann || domain.publicSuffix === null) return `does not end in a public domain suffix ('.${host.split(".").pop()}' is internal or reserved)`;
  if (domain.domain === null) return "is a public suffix itself, not a domain under one";
  const topLevel = host.slice(host.lastIndexOf(".") + 1);
  if (SPECIAL_USE_TOP_LEVEL.has(topLevel)) return `is in '.${topLevel}', a special-use domain that is not on the public internet`;
  return undefined;
}

/** Special-use names (RFC 6761, 8375, 9476) that the public suffix list carries but the internet does not route. */
const SPECIAL_USE_TOP_LEVEL: ReadonlySet<string> = new Set(["arpa", "onion", "alt"]);

/** True for every address that is not plain public unicast (loopback, private, link-local, CGNAT, ULA, multicast, ...). */
export function isBlockedAddress(address: string): boolean {
  return blockedRange(address) !== undefined;
}

/**
 * The special-purpose range an address falls in, or undefined for public unicast. IPv6 must
 * be global unicast (2000::/3) outside ipaddr.js's special ranges; addresses that embed an
 * IPv4 one (IPv4-mapped, IPv4-compatible, NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4,
 * Teredo) are refused outright: no real download needs them, and the IPv4 inside is
 * whatever the writer chose.
 */
function blockedRange(address: string): string | undefined {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return "malformed";
  }
  if (parsed.kind() === "ipv4") {
    const range = parsed.range();
    return range === "unicast" ? undefined : range;
  }
  const v6 = parsed as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) {
    const inner = blockedRange(v6.toIPv4Address().toString());
    return `IPv4-mapped${inner ? ` (${inner})` : ""}`;
  }
  if (v6.parts.slice(0, 6).every((part) => part === 0)) return v6.parts[6] === 0 && v6.parts[7]! <= 1 ? v6.range() : "IPv4-compatible";
  const range = v6.range();
  if (range !== "unicast") return range === "rfc6052" ? "NAT64" : range;
  return v6.match(GLOBAL_UNICAST) ? undefined : "reserved";
}

const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3");

/**
 * The parsed host is what gets fetched, but a written form that differs from it for an
 * address (`0x08080808`, `8.8.2056`, `８.８.８.８`) or that percent-encodes a name only
 * exists to get past filters that read the text: refused even when the address is public.
 */
function checkWrittenHost(raw: string, written: string, host: string): void {
  const text = written.toLowerCase().replace(/\.$/, "");
  if (text.includes("%")) throw notAllowed(raw, "percent-encodes its host name; write the name itself");
  if (ipaddr.IPv4.isValidFourPartDecimal(host) && text !== host) {
    throw notAllowed(raw, `writes the address ${host} as '${truncate(written)}'; write it in plain dotted decimal`);
  }
}

/** The host as written in the authority (`[v6]` without brackets), without userinfo or port. */
function writtenHost(authority: string): string {
  if (authority.startsWith("[")) return authority.slice(1, authority.indexOf("]") === -1 ? undefined : authority.indexOf("]"));
  const colon = authority.lastIndexOf(":");
  return colon === -1 ? authority : authority.slice(0, colon);
}

function hostOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
}

export function blockedHost(host: string): AppError {
  return new AppError("URL_HOST_BLOCKED", `The host '${truncate(host)}' is not a public internet address and cannot be fetched.`);
}

function notAllowed(raw: string, why: string): AppError {
  return new AppError("URL_NOT_ALLOWED", `The URL '${truncate(raw)}' ${why}.`, { token: truncate(raw) });
}

function truncate(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
