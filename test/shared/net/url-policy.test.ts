import { describe, expect, it } from "vitest";
import { AppError } from "../../../shared/errors";
import { checkFetchUrl, checkRedirect, hostProblem, isBlockedAddress } from "../../../shared/net/url-policy";

/** The AppError code `check` throws, or ACCEPTED. */
function outcome(check: () => unknown): string {
  try {
    check();
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
  return "ACCEPTED";
}

function codeOf(url: string, allowHosts: readonly string[] = []): string {
  return outcome(() => checkFetchUrl(url, { allowHosts }));
}

describe("checkFetchUrl: address literals in every notation the URL parser accepts", () => {
  it.each([
    ["octal", "http://0177.0.0.1/"],
    ["hex, one part", "http://0x7f000001/"],
    ["hex, dotted", "http://0x7f.0x0.0x0.0x1/"],
    ["integer", "http://2130706433/"],
    ["short, two parts", "http://127.1/"],
    ["short, three parts", "http://10.0.258/"],
    ["full-width digits", "http://１２７.０.０.１/"],
    ["ideographic full stops", "http://127。0。0。1/"],
    ["percent-encoded digits", "http://%31%32%37.0.0.1/"],
    ["trailing dot", "http://127.0.0.1./"],
    ["metadata, integer", "http://2852039166/"],
    ["metadata, hex", "http://0xa9fea9fe/"],
  ])("refuses loopback/metadata written in %s: %s", (_form, url) => {
    expect(codeOf(url)).toBe("URL_HOST_BLOCKED");
  });

  it.each(["http://0x08080808/", "http://8.8.2056/", "http://134744072/", "http://０８.８.８.８/", "http://010.8.8.8/"])(
    "refuses a public address written in any form but plain dotted decimal: %s",
    (url) => {
      expect(codeOf(url)).toBe("URL_NOT_ALLOWED");
    },
  );

  it.each([
    ["unspecified", "http://0.0.0.0/"], ["unspecified, short", "http://0/"], ["this network", "http://0.1.2.3/"],
    ["broadcast", "http://255.255.255.255/"], ["multicast", "http://224.0.0.1/"], ["multicast", "http://239.255.255.250/"],
    ["loopback", "http://127.53.0.1/"], ["private", "http://10.1.2.3/"], ["private", "http://172.16.0.1/"], ["private", "http://192.168.1.1/"],
    ["link-local metadata", "http://169.254.169.254/"], ["CGNAT", "http://100.64.0.1/"], ["CGNAT top", "http://100.127.255.254/"],
    ["benchmarking", "http://198.18.0.1/"], ["benchmarking", "http://198.19.255.1/"], ["documentation", "http://192.0.2.1/"],
    ["documentation", "http://198.51.100.7/"], ["documentation", "http://203.0.113.9/"], ["IETF protocol", "http://192.0.0.8/"],
    ["reserved class E", "http://240.0.0.1/"], ["6to4 relay", "http://192.88.99.1/"],
  ])("refuses the %s IPv4 address %s", (_range, url) => {
    expect(codeOf(url)).toBe("URL_HOST_BLOCKED");
  });

  it.each([
    ["loopback", "http://[::1]/"], ["unspecified", "http://[::]/"], ["IPv4-mapped loopback", "http://[::ffff:127.0.0.1]/"],
    ["IPv4-mapped, hex", "http://[::ffff:7f00:1]/"], ["IPv4-mapped, long", "http://[0:0:0:0:0:ffff:169.254.169.254]/"],
    ["IPv4-mapped public", "http://[::ffff:8.8.8.8]/"], ["IPv4-compatible", "http://[::127.0.0.1]/"], ["IPv4-compatible", "http://[::10.0.0.1]/"],
    ["IPv4-translated", "http://[::ffff:0:7f00:1]/"], ["NAT64", "http://[64:ff9b::127.0.0.1]/"], ["NAT64", "http://[64:ff9b::a9fe:a9fe]/"],
    ["local-use NAT64", "http://[64:ff9b:1::a00:1]/"], ["6to4", "http://[2002:7f00:1::1]/"], ["6to4", "http://[2002:a9fe:a9fe::]/"],
    ["Teredo", "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/"], ["ULA", "http://[fc00::1]/"], ["ULA", "http://[fd12:3456::1]/"],
    ["link-local", "http://[fe80::1]/"], ["site-local", "http://[fec0::1]/"], ["multicast", "http://[ff02::1]/"],
    ["documentation", "http://[2001:db8::1]/"], ["documentation", "http://[3fff::1]/"], ["discard", "http://[100::1]/"],
    ["benchmarking", "http://[2001:2::1]/"], ["outside 2000::/3", "http://[4000::1]/"],
  ])("refuses the %s IPv6 address %s", (_range, url) => {
    expect(codeOf(url)).toBe("URL_HOST_BLOCKED");
  });

  it.each(["https://8.8.8.8/a.mp4", "https://[2606:4700:4700::1111]/a.mp4", "https://[2a00:1450:4001:80b::200e]/a.mp4"])("accepts the public address %s", (url) => {
    expect(codeOf(url)).toBe("ACCEPTED");
  });
});

describe("checkFetchUrl: names", () => {
  it.each([
    "http://localhost/", "http://LOCALHOST/", "http://localhost./", "http://app.localhost/", "http://metadata.google.internal/",
    "http://metadata.google.internal./", "http://anything.internal/", "http://printer.local/", "http://metadata/", "http://instance-data/",
    "http://intranet/", "http://router.home.arpa/", "http://1.0.0.127.in-addr.arpa/", "http://media.test/", "http://site.example/",
    "http://x.invalid/", "http://hidden.onion/", "http://host.corp/", "http://host.lan/", "http://co.uk/", "http://com/",
  ])("refuses %s: reserved, single-label or not under a public suffix", (url) => {
    expect(codeOf(url)).toBe("URL_HOST_BLOCKED");
  });

  it.each(["https://example.com/a.mp4", "https://cdn.example.co.uk/a.mp4", "https://bucket.s3.amazonaws.com/a.mp4", "https://bücher.de/a.mp4", "HTTPS://EXAMPLE.COM/a.mp4", "https://example.com./a.mp4"])(
    "accepts %s",
    (url) => {
      expect(codeOf(url)).toBe("ACCEPTED");
    },
  );

  it.each(["http://ⓛⓞⓒⓐⓛⓗⓞⓢⓣ/", "http://ｌｏｃａｌｈｏｓｔ/", "http://loc%61lhost/", "http://metadata.google.internal%2e/"])(
    "judges %s by the name the URL parser makes of it",
    (url) => {
      expect(codeOf(url, ["localhost"])).not.toBe("ACCEPTED");
    },
  );

  it("refuses a percent-encoded host name even when it decodes to a public one", () => {
    expect(codeOf("https://ex%61mple.com/a.mp4")).toBe("URL_NOT_ALLOWED");
  });
});

describe("checkFetchUrl: credentials, ports and schemes", () => {
  it.each([
    "http://good.com@evil.com/", "http://user:pass@example.com/", "http://:@example.com/", "http://@example.com/",
    "http://good.com%40evil.com/", "http://example.com:8080/", "https://example.com:8443/", "http://example.com:443/", "https://example.com:80/",
    "http://example.com:0/", "http:/example.com/", "http:\\\\example.com/", "https:example.com/", "ftp://example.com/", "file:///etc/passwd",
    "gopher://example.com/", "http://exa mple.com/", " http://example.com/", "http://example.com/\n",
  ])("refuses %j with URL_NOT_ALLOWED", (url) => {
    expect(codeOf(url)).toBe("URL_NOT_ALLOWED");
  });

  it("accepts a default port written out", () => {
    expect(checkFetchUrl("http://example.com:80/a").port).toBe("");
    expect(checkFetchUrl("https://example.com:443/a").port).toBe("");
  });

});

describe("checkFetchUrl: URLs that parsers read differently", () => {
  it.each([
    ["a backslash before '@' (WHATWG: host example.com; ffmpeg and RFC 3986: host 127.0.0.1)", "https://example.com\\@127.0.0.1/a.mp4"],
    ["a backslash before '@', the other way round", "http://127.0.0.1\\@example.com/"],
    ["a backslash ending the authority", "https://example.com\\evil.com/a.mp4"],
    ["a backslash in the path", "https://example.com/media\\a.mp4"],
    ["a backslash after a default port", "https://example.com:443\\@127.0.0.1/a.mp4"],
    ["an empty authority followed by the host (WHATWG skips the extra slash)", "http:///example.com/a.mp4"],
    ["three slashes before a host that is allow-listed", "http:///127.0.0.1:8787/a.mp4"],
    ["an ideographic full stop inside a name", "https://example\u3002com/a.mp4"],
    ["a full-width full stop inside a name", "https://example\uff0ecom/a.mp4"],
    ["a port with a leading zero", "https://example.com:0443/a.mp4"],
    ["an empty port after ':'", "https://example.com:/a.mp4"],
    ["an encoded '/' in the host", "https://example.com%2f.evil.com/a.mp4"],
    ["an encoded '@' in the host", "https://example.com%40127.0.0.1/a.mp4"],
    ["an encoded ':' in the host", "https://example.com%3a80/a.mp4"],
    ["a tab inside the host (WHATWG drops it)", "https://exam\tple.com/a.mp4"],
    ["a line feed inside the scheme", "ht\ntps://example.com/a.mp4"],
    ["a non-breaking space in the host", "https://example.com\u00a0/a.mp4"],
    ["a soft hyphen inside a name (WHATWG drops it)", "https://exam\u00adple.com/a.mp4"],
    ["a zero-width joiner inside a name", "https://exam\u200dple.com/a.mp4"],
    ["a variation selector inside a name", "https://example\ufe0f.com/a.mp4"],
    ["full-width letters beside real non-ASCII ones", "https://\uff42\u00fccher.de/a.mp4"],
    ["a decomposed accent (NFD)", "https://bu\u0308cher.de/a.mp4"],
    ["a name of full-width letters only", "https://\uff45xample.com/a.mp4"],
  ])("refuses %s with URL_NOT_ALLOWED", (_form, url) => {
    expect(codeOf(url)).toBe("URL_NOT_ALLOWED");
  });

  it.each(["https://bücher.de/a.mp4", "https://EXAMPLE.com/a.mp4", "https://[2606:4700:4700:0:0::1111]/a.mp4", "https://example.com/a.mp4?from=me@example.com#t=1"])(
    "accepts %s, which every parser reads alike",
    (url) => {
      expect(codeOf(url)).toBe("ACCEPTED");
    },
  );

  it("applies to allow-listed hosts too", () => {
    expect(codeOf("http://127.0.0.1:8787\\@example.com/a.mp4", ["127.0.0.1"])).toBe("URL_NOT_ALLOWED");
    expect(codeOf("http://127.0.0.1:08787/a.mp4", ["127.0.0.1"])).toBe("URL_NOT_ALLOWED");
  });
});

describe("checkRedirect: a Location judged as the server wrote it", () => {
  const from = new URL("https://media.example.com/dir/a.mp4");
  const local = new URL("http://127.0.0.1:8787/dir/a.mp4");

  function redirectCode(location: string, base = from, allowHosts: readonly string[] = []): string {
    return outcome(() => checkRedirect(location, base, { allowHosts }));
  }

  it.each([
    ["an absolute URL", "https://cdn.example.com/b.mp4", "https://cdn.example.com/b.mp4"],
    ["a scheme-relative URL", "//cdn.example.com/b.mp4", "https://cdn.example.com/b.mp4"],
    ["an absolute path", "/other/b.mp4", "https://media.example.com/other/b.mp4"],
    ["a relative path", "b.mp4?x=1", "https://media.example.com/dir/b.mp4?x=1"],
    ["a query only", "?signed=1", "https://media.example.com/dir/a.mp4?signed=1"],
  ])("follows %s", (_form, location, expected) => {
    expect(checkRedirect(location, from, {}).href).toBe(expected);
  });

  it.each([
    ["hex", "http://0x7f000001:8787/b.mp4"],
    ["integer", "http://2130706433:8787/b.mp4"],
    ["short form", "http://127.1:8787/b.mp4"],
    ["octal", "http://0177.0.0.1:8787/b.mp4"],
    ["scheme-relative hex", "//0x7f000001:8787/b.mp4"],
  ])("refuses a hop to the allow-listed loopback written in %s, as it would be refused at submission", (_form, location) => {
    expect(redirectCode(location, local, ["127.0.0.1"])).not.toBe("ACCEPTED");
    const submitted = location.startsWith("//") ? `http:${location}` : location;
    expect(redirectCode(location, local, ["127.0.0.1"])).toBe(codeOf(submitted, ["127.0.0.1"]));
  });

  it.each([
    ["a path that WHATWG reads as another host", "/\\evil.example.net/b.mp4"],
    ["two backslashes", "\\\\evil.example.net/b.mp4"],
    ["a backslash before '@'", "https://example.com\\@127.0.0.1/b.mp4"],
    ["a tab in a relative path", "/b\t.mp4"],
    ["a scheme without slashes", "https:evil.example.net/b.mp4"],
    ["a non-http scheme", "file:///etc/passwd"],
  ])("refuses %s with URL_NOT_ALLOWED", (_form, location) => {
    expect(redirectCode(location)).toBe("URL_NOT_ALLOWED");
  });

  it.each(["http://0x7f000001/", "http://2130706433/", "http://127.1/", "http://0177.0.0.1/", "//169.254.169.254/latest/"])("refuses a hop to %s with URL_HOST_BLOCKED", (location) => {
    expect(redirectCode(location)).toBe("URL_HOST_BLOCKED");
  });
});

describe("checkFetchUrl: the development allow-list", () => {
  it("lets 127.0.0.1 and localhost through, on any port, as written", () => {
    expect(codeOf("http://127.0.0.1:8787/a.mp4", ["127.0.0.1", "localhost"])).toBe("ACCEPTED");
    expect(codeOf("http://localhost:8787/a.mp4", ["127.0.0.1", "localhost"])).toBe("ACCEPTED");
  });

  it("does not extend to other spellings of an allowed address", () => {
    expect(codeOf("http://2130706433:8787/a.mp4", ["127.0.0.1"])).toBe("URL_NOT_ALLOWED");
    expect(codeOf("http://127.1/a.mp4", ["127.0.0.1"])).toBe("URL_HOST_BLOCKED");
    expect(codeOf("http://127.0.0.2/a.mp4", ["127.0.0.1"])).toBe("URL_HOST_BLOCKED");
  });

  it("still refuses credentials for an allowed host", () => {
    expect(codeOf("http://u:p@127.0.0.1:8787/", ["127.0.0.1"])).toBe("URL_NOT_ALLOWED");
  });
});

describe("isBlockedAddress (the connect-time check of resolved addresses)", () => {
  it.each(["127.0.0.1", "10.0.0.1", "169.254.169.254", "100.64.0.1", "198.18.0.1", "0.0.0.0", "::1", "::ffff:127.0.0.1", "64:ff9b::7f00:1", "fd00::1", "not-an-ip"])(
    "blocks %s",
    (address) => {
      expect(isBlockedAddress(address)).toBe(true);
    },
  );

  it.each(["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])("allows %s", (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  it("hostProblem says why in words", () => {
    expect(hostProblem("100.64.0.1")).toMatch(/carrierGradeNat/);
    expect(hostProblem("corp")).toMatch(/single-label/);
    expect(hostProblem("example.com")).toBeUndefined();
  });
});
