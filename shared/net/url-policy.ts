import ipaddr from "ipaddr.js";
import { parse as parseDomain } from "tldts";
import { AppError } from "../errors";

export interface UrlPolicyOptions {
  /** Test/dev-only hosts (names or literal IPs, written exactly so) that may be private, on any port. Empty in production. */
  allowHosts?: readonly string[];
}

/**
 * Checks a URL a stranger gave us, before anything is fetched: everything that can be decided
 * without DNS, judged on the string as written. http(s) only, written with `//`; no
 * credentials (`good.com@evil`, even encoded); default ports; address literals only in plain
 * dotted decimal (the WHATWG parser turns `0x7f.1`, `0177.0.0.1`, `2130706433`, `127.1` and
 * full-width digits into 127.0.0.1, so the written form and the parsed one are both judged); no
 * address that is not public unicast; no name outside the public suffix list (`.internal`,
 * `.local`, single labels...). A URL that WHATWG (our fetchers) and a plain RFC 3986 reading
 * (ffmpeg, proxies, logs) would send to different places is refused: backslashes, whitespace
 * and control characters anywhere, and any authority whose scheme, host or port the two read
 * differently. What a public-looking name resolves to is checked at connect time by each
 * runtime's fetcher. Task inputs, /api/upload/url, webhooks and every redirect hop (see
 * {@link checkRedirect}) all pass through here.
 */
export function checkFetchUrl(raw: string, options: UrlPolicyOptions = {}): URL {
  checkCharacters(raw);
  const written = plainAuthority(raw);
  if (!written) throw notAllowed(raw, "is not an http(s) URL of the form http(s)://host/path");
  if (written.userinfo !== undefined) throw notAllowed(raw, "carries credentials ('user@host'), which are not allowed");
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw notAllowed(raw, "is not a valid absolute URL");
  }
  if (url.username || url.password) throw notAllowed(raw, "carries credentials ('user@host'), which are not allowed");
  checkWrittenPort(raw, written.port, url);
  const host = hostOf(url);
  const allowed = options.allowHosts?.includes(host) === true && bare(written.host) === host;
  if (allowed) return url;
  if (url.port !== "") throw notAllowed(raw, `uses port ${url.port}; only the default port of ${url.protocol.slice(0, -1)} is allowed`);
  const why = hostProblem(host);
  if (why) throw new AppError("URL_HOST_BLOCKED", `The host '${truncate(host)}' ${why}, and cannot be fetched.`, { token: truncate(raw) });
  checkWrittenHost(raw, written.host, host);
  return url;
}

/**
 * The URL a redirect leads to, judged on its Location header as the server wrote it (resolving
 * it first would normalise `0x7f000001` into `127.0.0.1` before the check). An absolute or
 * scheme-relative Location passes {@link checkFetchUrl} as it stands; a relative one keeps the
 * checked host of `from`, and only needs to be free of what parsers read differently
 * (`/\evil.com` is a path to RFC 3986 and another host to WHATWG).
 */
export function checkRedirect(location: string, from: URL, options: UrlPolicyOptions = {}): URL {
  if (/^[a-z][a-z0-9+.-]*:/i.test(location)) return checkFetchUrl(location, options);
  if (location.startsWith("//")) return checkFetchUrl(`${from.protocol}${location}`, options);
  checkCharacters(location);
  const url = new URL(location, from);
  if (url.host !== from.host) throw notAllowed(location, `leaves ${from.host} without naming its host`);
  return checkFetchUrl(url.href, options);
}

/**
 * Characters some parsers drop, split on or turn into '/' where others keep them: whitespace
 * and controls (WHATWG strips tabs and newlines), characters IDNA ignores (soft hyphen,
 * zero-width joiners, variation selectors) and the backslash.
 */
function checkCharacters(raw: string): void {
  if (/[\u0000-\u0020\u007f-\u00a0\u00ad\u034f\u061c\u1680\u180b-\u180f\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufe00-\ufe0f\ufeff]/.test(raw)) {
    throw notAllowed(raw, "contains whitespace, control or invisible characters; percent-encode them");
  }
  if (raw.includes("\\")) throw notAllowed(raw, "contains a backslash, which WHATWG parsers read as '/' and others as a plain character; percent-encode it as %5C");
}

interface WrittenAuthority {
  userinfo?: string;
  /** As written: `[v6]` without brackets, no trailing-dot or case change. */
  host: string;
  /** As written after ':', or undefined when there is no ':'. */
  port?: string;
}

/**
 * The authority of an http(s) URL as RFC 3986 (appendix B) and ffmpeg's `av_url_split` read
 * it: after exactly `scheme://`, up to the first '/', '?' or '#'; userinfo up to the last '@'.
 */
function plainAuthority(raw: string): WrittenAuthority | undefined {
  const match = /^https?:\/\/([^/?#]*)/i.exec(raw);
  if (!match) return undefined;
  let authority = match[1]!;
  const at = authority.lastIndexOf("@");
  const userinfo = at === -1 ? undefined : authority.slice(0, at);
  authority = authority.slice(at + 1);
  const close = authority.startsWith("[") ? authority.indexOf("]") : -1;
  if (close !== -1) {
    const rest = authority.slice(close + 1);
    return { userinfo, host: authority.slice(1, close), port: rest.startsWith(":") ? rest.slice(1) : rest === "" ? undefined : rest };
  }
  const colon = authority.lastIndexOf(":");
  return colon === -1 ? { userinfo, host: authority } : { userinfo, host: authority.slice(0, colon), port: authority.slice(colon + 1) };
}

/** The port as written must be the one WHATWG uses, in plain decimal (`:0443`, `:` and `:80x` are not). */
function checkWrittenPort(raw: string, written: string | undefined, url: URL): void {
  if (written === undefined) return;
  const effective = url.port || (url.protocol === "https:" ? "443" : "80");
  if (written !== effective) throw notAllowed(raw, `writes its port as '${truncate(written)}', which parsers read differently; write ${effective} or leave it out`);
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
 * The parsed host is what gets fetched, but a written form that differs from it only exists to
 * get past filters (and parsers) that read the text: an address not in plain dotted decimal
 * (`0x08080808`, `8.8.2056`, `８.８.８.８`), a percent-encoded name, a name whose dots a parser
 * invents (`example。com`) or an empty authority WHATWG skips over (`http:///example.com`).
 * Refused even when the address is public.
 */
function checkWrittenHost(raw: string, written: string, host: string): void {
  const text = bare(written);
  if (text.includes("%")) throw notAllowed(raw, "percent-encodes its host name; write the name itself");
  if (ipaddr.IPv4.isValidFourPartDecimal(host)) {
    if (text !== host) throw notAllowed(raw, `writes the address ${host} as '${truncate(written)}'; write it in plain dotted decimal`);
    return;
  }
  if (host.includes(":") ? sameAddress(text, host) : sameName(text, host)) return;
  throw notAllowed(raw, `names the host '${truncate(written)}', which URL parsers read differently (WHATWG reads '${truncate(host)}')`);
}

function sameAddress(written: string, host: string): boolean {
  return ipaddr.IPv6.isValid(written) && ipaddr.parse(written).toNormalizedString() === ipaddr.parse(host).toNormalizedString();
}

/**
 * The same name, or an internationalised one whose labels (split on '.' alone) each map to the
 * parsed label and are written in their composed form: IDNA's compatibility mappings
 * (full-width letters, ligatures, decomposed accents) are where a name read by IDNA and the
 * same text read plainly part ways.
 */
function sameName(written: string, host: string): boolean {
  if (written === host) return true;
  if (/^[\x00-\x7f]*$/.test(written)) return false;
  const labels = written.split(".");
  const parsed = host.split(".");
  return labels.length === parsed.length && labels.every((label, index) => label === label.normalize("NFKC") && asciiLabel(label) === parsed[index]);
}

function asciiLabel(label: string): string | undefined {
  try {
    return new URL(`http://${label}.invalid/`).hostname.slice(0, -".invalid".length);
  } catch {
    return undefined;
  }
}

function bare(host: string): string {
  return host.toLowerCase().replace(/\.$/, "");
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
