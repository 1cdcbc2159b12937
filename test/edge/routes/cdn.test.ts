import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../../edge/index";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createUser, fakeMp4, pathOf, postJson, uploadFile } from "../helpers";
import { originUrl, seedFile } from "../files/fixtures";
import { expectProblem } from "../../helpers/problems";
import { HTML_PAGE, originPaths } from "../files/origin";

const BODY = "0123456789".repeat(10);
const HOUR = 3_600_000;

let path: string;
let userId: string;

beforeAll(async () => {
  userId = (await createUser()).userId;
  path = `/${await seedFile(userId, { expiresAt: new Date(Date.now() + 2 * HOUR), body: BODY })}`;
});

function get(target: string, headers: Record<string, string> = {}, method = "GET"): Promise<Response> {
  return api(target, undefined, { method, headers });
}

describe("GET /uploads/... ranges", () => {
  it.each([
    ["bytes=0-9", "bytes 0-9/100", BODY.slice(0, 10)],
    ["bytes=10-19", "bytes 10-19/100", BODY.slice(10, 20)],
    ["bytes=90-", "bytes 90-99/100", BODY.slice(90)],
    ["bytes=95-500", "bytes 95-99/100", BODY.slice(95)],
    ["bytes=-7", "bytes 93-99/100", BODY.slice(93)],
    ["bytes=-500", "bytes 0-99/100", BODY],
    ["bytes=99-99", "bytes 99-99/100", BODY.slice(99)],
  ])("answers %s with 206 and Content-Range %s", async (range, contentRange, expected) => {
    const response = await get(path, { range });
    expect(response.status).toBe(206);
    expect(response.headers.get("content-range")).toBe(contentRange);
    expect(response.headers.get("content-length")).toBe(String(expected.length));
    expect(await response.text()).toBe(expected);
  });

  it.each(["bytes=100-", "bytes=500-600", "bytes=-0"])("answers %s with 416 and Content-Range bytes */100", async (range) => {
    const response = await get(path, { range });
    expect(response.status).toBe(416);
    expect(response.headers.get("content-range")).toBe("bytes */100");
    expect(await response.text()).toBe("");
  });

  it.each(["bytes=0-1,5-6", "items=0-5", "bytes=abc"])("ignores a Range it does not serve (%s) and sends the whole file", async (range) => {
    const response = await get(path, { range });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(BODY);
  });

  it("answers HEAD with a range with 206 headers and no body", async () => {
    const response = await get(path, { range: "bytes=-5" }, "HEAD");
    expect(response.status).toBe(206);
    expect(response.headers.get("content-range")).toBe("bytes 95-99/100");
    expect(response.headers.get("content-length")).toBe("5");
    expect(await response.text()).toBe("");
  });
});

describe("GET /uploads/... caching", () => {
  it("sends an ETag, and 304 without a body when If-None-Match matches it (strong, weak or *)", async () => {
    const first = await get(path);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[^"]+"$/);
    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const response = await get(path, { "if-none-match": ifNoneMatch });
      expect(response.status, ifNoneMatch).toBe(304);
      expect(response.headers.get("etag")).toBe(etag);
      expect(await response.text()).toBe("");
    }
    const changed = await get(path, { "if-none-match": '"something-else"' });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toBe(BODY);
  });

  it("answers 304 to If-Modified-Since at or after Last-Modified and 200 before it", async () => {
    const lastModified = (await get(path)).headers.get("last-modified")!;
    expect(Date.parse(lastModified)).not.toBeNaN();
    expect((await get(path, { "if-modified-since": lastModified })).status).toBe(304);
    expect((await get(path, { "if-modified-since": new Date(Date.now() + HOUR).toUTCString() })).status).toBe(304);
    const before = await get(path, { "if-modified-since": new Date(Date.parse(lastModified) - HOUR).toUTCString() });
    expect(before.status).toBe(200);
    expect(await before.text()).toBe(BODY);
  });

  it("lets If-None-Match win over If-Modified-Since", async () => {
    const lastModified = (await get(path)).headers.get("last-modified")!;
    const response = await get(path, { "if-none-match": '"other"', "if-modified-since": lastModified });
    expect(response.status).toBe(200);
  });

  it("never lets Cache-Control outlive the file", async () => {
    const soon = `/${await seedFile(userId, { expiresAt: new Date(Date.now() + 100_000) })}`;
    const maxAge = Number(/max-age=(\d+)/.exec((await get(soon)).headers.get("cache-control") ?? "")?.[1]);
    expect(maxAge).toBeGreaterThan(90);
    expect(maxAge).toBeLessThanOrEqual(100);
    const later = `/${await seedFile(userId, { expiresAt: new Date(Date.now() + 48 * HOUR) })}`;
    expect((await get(later)).headers.get("cache-control")).toBe("public, max-age=86400, s-maxage=600");
  });
});

/** GETs `target` until this data center's cache answers it (the fill runs after the first answer). */
async function untilCached(target: string): Promise<Response> {
  for (const deadline = Date.now() + 20_000; ; await scheduler.wait(50)) {
    const response = await get(target);
    if (response.headers.get("cf-cache-status") === "HIT" || Date.now() > deadline) return response;
    await response.body?.cancel();
  }
}

describe("GET /uploads/... edge cache (Cache API)", () => {
  it("answers the first GET from R2 (MISS) and the next ones from the cache (HIT), byte for byte", async () => {
    const target = `/${await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR), body: BODY })}`;
    const first = await get(target);
    expect(first.headers.get("cf-cache-status")).toBe("MISS");
    expect(await first.text()).toBe(BODY);
    const hit = await untilCached(target);
    expect(hit.headers.get("cf-cache-status")).toBe("HIT");
    expect(hit.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(hit.headers.get("content-security-policy")).toBe("sandbox; default-src 'none'");
    expect(await hit.text()).toBe(BODY);
  });

  it("answers a conditional GET on a miss with 304 and no body", async () => {
    const target = `/${await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR), body: BODY })}`;
    const notModified = await get(target, { "if-none-match": "*" });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get("etag")).toMatch(/^"[^"]+"$/);
    expect(await notModified.text()).toBe("");
  });

  it("fills the cache only from a plain GET of the whole file: a Range, HEAD or 304 miss reads only what it answers", async () => {
    const key = await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR), body: BODY });
    const reads: { whole: number; ranged: number } = { whole: 0, ranged: 0 };
    const files = new Proxy(env.FILES, {
      get(target, property) {
        if (property === "get") {
          return (name: string, options?: R2GetOptions) => {
            reads[options?.range ? "ranged" : "whole"] += 1;
            return target.get(name, options);
          };
        }
        const value = Reflect.get(target, property) as unknown;
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    // Straight to the Worker, waiting for its waitUntil work: a fill could not still be running when the next request looks.
    async function settled(headers: Record<string, string>, method = "GET"): Promise<{ status: number; cache: string | null; body: string }> {
      const ctx = createExecutionContext();
      const response = await worker.fetch(new Request(`http://localhost:8787/${key}`, { method, headers }), { ...env, FILES: files }, ctx);
      const body = await response.text();
      await waitOnExecutionContext(ctx);
      return { status: response.status, cache: response.headers.get("cf-cache-status"), body };
    }
    expect((await settled({ range: "bytes=10-19" })).status).toBe(206);
    expect((await settled({}, "HEAD")).status).toBe(200);
    expect((await settled({ range: "bytes=-5" }, "HEAD")).status).toBe(206);
    expect((await settled({ "if-none-match": "*" })).status).toBe(304);
    expect(reads.ranged).toBe(1);
    expect(await settled({})).toEqual({ status: 200, cache: "MISS", body: BODY });
    expect(await settled({})).toEqual({ status: 200, cache: "HIT", body: BODY });
    // The 304's read, then the plain GET's, which served the client and filled the cache at once.
    expect(reads.whole).toBe(2);
  });

  it("answers a GET on a miss whose If-None-Match does not match with the whole file (MISS)", async () => {
    const target = `/${await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR), body: BODY })}`;
    const response = await get(target, { "if-none-match": '"something-else"' });
    expect(response.status).toBe(200);
    expect(response.headers.get("cf-cache-status")).toBe("MISS");
    expect(response.headers.get("content-length")).toBe(String(BODY.length));
    expect(await response.text()).toBe(BODY);
  });

  it("serves a HIT even after the object is gone from R2, until the file is purged", async () => {
    const key = await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR), body: BODY });
    await (await untilCached(`/${key}`)).body?.cancel();
    await env.FILES.delete(key);
    expect(await (await get(`/${key}`)).text()).toBe(BODY);
  });

  it.each([
    ["bytes=10-19", "bytes 10-19/100", BODY.slice(10, 20)],
    ["bytes=-500", "bytes 0-99/100", BODY],
    ["bytes=95-500", "bytes 95-99/100", BODY.slice(95)],
  ])("answers %s from the cache with 206 and Content-Range %s", async (range, contentRange, expected) => {
    const target = `/${await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR), body: BODY })}`;
    await (await untilCached(target)).body?.cancel();
    const response = await get(target, { range });
    expect(response.status).toBe(206);
    expect(response.headers.get("cf-cache-status")).toBe("HIT");
    expect(response.headers.get("content-range")).toBe(contentRange);
    expect(await response.text()).toBe(expected);
  });

  it("answers conditional and unsatisfiable requests from the cache as R2 would", async () => {
    const target = `/${await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR), body: BODY })}`;
    const cached = await untilCached(target);
    await cached.body?.cancel();
    const etag = cached.headers.get("etag")!;
    expect((await get(target, { "if-none-match": etag })).status).toBe(304);
    expect((await get(target, { "if-none-match": '"other"', "if-modified-since": cached.headers.get("last-modified")! })).status).toBe(200);
    const unsatisfiable = await get(target, { range: "bytes=100-" });
    expect(unsatisfiable.status).toBe(416);
    expect(unsatisfiable.headers.get("content-range")).toBe("bytes */100");
    const head = await get(target, {}, "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("100");
    expect(await head.text()).toBe("");
  });

  it("keeps a file in the edge cache no longer than it lives", async () => {
    const target = `/${await seedFile(userId, { expiresAt: new Date(Date.now() + 3_000), body: BODY })}`;
    const cached = await untilCached(target);
    await cached.body?.cancel();
    expect(cached.headers.get("cf-cache-status")).toBe("HIT");
    expect(Number(/s-maxage=(\d+)/.exec(cached.headers.get("cache-control")!)?.[1])).toBeLessThanOrEqual(3);
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await scheduler.wait(200)) {
      const response = await get(target);
      if (response.status === 404) return;
      await response.body?.cancel();
    }
    expect.fail("the expired file was still served");
  });

  it("purges the cached copy when the owner deletes the file", async () => {
    const { key: apiKey } = await createUser();
    const record = await (await uploadFile(apiKey, fakeMp4(4096))).json<{ url: string; key: string }>();
    await (await untilCached(pathOf(record.url))).body?.cancel();
    expect((await api(`/api/files/${encodeURIComponent(record.key)}`, apiKey, { method: "DELETE" })).status).toBe(204);
    await expectProblem(await get(pathOf(record.url)), 404, "NOT_FOUND");
  });

  it("serves an object that carries no metadata (a presigned R2 PUT) for as long as its D1 row says", async () => {
    const live = `uploads/${userId}/${crypto.randomUUID().replaceAll("-", "")}.mp4`;
    const expired = `uploads/${userId}/${crypto.randomUUID().replaceAll("-", "")}.mp4`;
    for (const [key, expiresAt] of [[live, Date.now() + HOUR], [expired, Date.now() - 1000]] as const) {
      await env.FILES.put(key, fakeMp4(1000), { httpMetadata: { contentType: "video/mp4" } });
      await env.DB.prepare("INSERT INTO files (key, user_id, kind, task_id, size, md5, content_type, original_name, created_at, expires_at) VALUES (?, ?, 'upload', NULL, 1000, NULL, 'video/mp4', NULL, ?, ?)")
        .bind(key, userId, new Date().toISOString(), new Date(expiresAt).toISOString()).run();
    }
    const response = await get(`/${live}`);
    expect(response.status).toBe(200);
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(fakeMp4(1000));
    await expectProblem(await get(`/${expired}`), 404, "NOT_FOUND");
  });
});

describe("GET /uploads/... headers", () => {
  it("answers HEAD with the file's headers and no body", async () => {
    const response = await get(path, {}, "HEAD");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-length")).toBe("100");
    expect(response.headers.get("content-type")).toBe("text/plain");
    expect(response.headers.get("accept-ranges")).toBe("bytes");
    expect(response.headers.get("etag")).toMatch(/^"/);
    expect(await response.text()).toBe("");
  });

  it("sends X-Content-Type-Options: nosniff and serves a video inline", async () => {
    const { key } = await createUser();
    const record = await (await uploadFile(key, fakeMp4(4096))).json<{ url: string }>();
    const response = await get(pathOf(record.url));
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("content-type")).toBe("video/mp4");
    expect(response.headers.get("content-disposition")).toBeNull();
  });

  it.each([
    ["text/html", HTML_PAGE],
    ["image/svg+xml", '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'],
    ["application/xml", '<?xml version="1.0"?><a/>'],
    ["text/xml", "<a/>"],
    ["text/javascript", "alert(document.cookie)"],
    ["application/javascript", "alert(document.cookie)"],
    ["application/xhtml+xml", '<html xmlns="http://www.w3.org/1999/xhtml"></html>'],
    ["text/plain", HTML_PAGE],
    ["application/octet-stream", HTML_PAGE],
  ])("serves content uploaded as %s that a browser could render as an attachment", async (type, content) => {
    const { key } = await createUser();
    const response = await postJson("/api/upload/base64", key, { data: `data:${type};base64,${btoa(content)}` });
    expect(response.status).toBe(201);
    const download = await get(pathOf((await response.json<{ url: string }>()).url));
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toMatch(/^attachment/);
    expect(download.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await download.text()).toBe(content);
  });
});

describe("GET /uploads/... not found", () => {
  it("answers 404 to a file past its expires_at although the object is still in R2", async () => {
    const key = await seedFile(userId, { expiresAt: new Date(Date.now() - 1000) });
    expect(await env.FILES.head(key)).not.toBeNull();
    await expectProblem(await get(`/${key}`), 404, "NOT_FOUND");
    expect((await get(`/${key}`, {}, "HEAD")).status).toBe(404);
  });

  it("answers 404 to an object without an expiry", async () => {
    const key = `uploads/${userId}/no-expiry.txt`;
    await env.FILES.put(key, "x");
    await expectProblem(await get(`/${key}`), 404, "NOT_FOUND");
  });

  it.each([
    ["an unknown key", "/uploads/usr_nobody/0123456789abcdef0123456789abcdef.mp4"],
    ["encoded dot segments", "/uploads/%2e%2e/%2e%2e/secret.txt"],
    ["an encoded slash", "/uploads/a%2Fb/c.txt"],
    ["malformed percent-encoding", "/uploads/x/%E0%A4%A.mp4"],
    ["a key too deep for uploads", "/uploads/a/b/c.txt"],
  ])("answers 404 problem+json to %s", async (_label, target) => {
    await expectProblem(await get(target), 404, "NOT_FOUND");
  });

  it("does not serve bucket objects outside uploads/ and outputs/", async () => {
    await env.FILES.put("internal/secret.txt", "secret", { customMetadata: { expires_at: new Date(Date.now() + HOUR).toISOString() } });
    await expectProblem(await get("/internal/secret.txt"), 404, "NOT_FOUND");
  });
});

/** A script that runs if a browser renders the file as a document. */
const ACTIVE = '<?xml version="1.0"?><x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(document.domain)</x:script>';

function toBase64(bytes: Uint8Array): string {
  return btoa(Array.from(bytes, (byte) => String.fromCharCode(byte)).join(""));
}

/** The four ways a file arrives, each declaring `type` for `body`; resolves to the CDN path of the stored file. */
const uploadPaths: Record<string, (apiKey: string, type: string, body: Uint8Array) => Promise<string>> = {
  multipart: async (apiKey, type, body) => pathOf((await (await uploadFile(apiKey, body, type, "file.dat")).json<{ url: string }>()).url),
  base64: async (apiKey, type, body) => pathOf((await (await postJson("/api/upload/base64", apiKey, { data: `data:${type};base64,${toBase64(body)}` })).json<{ url: string }>()).url),
  url: async (apiKey, type, body) => pathOf((await (await postJson("/api/upload/url", apiKey, { url: originUrl(originPaths.typed(type, toBase64(body))) })).json<{ url: string }>()).url),
  "signed PUT": async (apiKey, type, body) => {
    const grant = await (await postJson("/v1/uploads/sign", apiKey, { filename: "file.dat", size: body.byteLength, content_type: type })).json<{ upload_url: string; public_url: string }>();
    expect((await api(pathOf(grant.upload_url), undefined, { method: "PUT", headers: { "content-type": type }, body })).status).toBe(201);
    return pathOf(grant.public_url);
  },
};

describe("GET /uploads/... serves only passive types inline (sandboxed in any case)", () => {
  const activeTypes = ["text/xsl", "text/rdf", "application/rdf+xml", "application/xslt+xml", "text/xml", "application/x-unknown", "image/svg+xml", "text/html", "application/pdf"];
  for (const [path, upload] of Object.entries(uploadPaths)) {
    it.each(activeTypes)(`${path}: a file declared %s is an attachment with a sandbox CSP`, async (type) => {
      const { key: apiKey } = await createUser();
      const download = await get(await upload(apiKey, type, new TextEncoder().encode(ACTIVE)));
      expect(download.status).toBe(200);
      expect(download.headers.get("content-disposition")).toMatch(/^attachment; filename="[0-9a-f]{32}\.[a-z0-9]+"$/);
      expect(download.headers.get("content-security-policy")).toBe("sandbox; default-src 'none'");
      expect(download.headers.get("x-content-type-options")).toBe("nosniff");
      expect(await download.text()).toBe(ACTIVE);
    });

    it.each([["text/plain", new TextEncoder().encode("just words")], ["video/mp4", fakeMp4(600)]])(`${path}: a file declared %s is inline, still with a sandbox CSP`, async (type, body) => {
      const { key: apiKey } = await createUser();
      const download = await get(await upload(apiKey, type, body));
      expect(download.status).toBe(200);
      expect(download.headers.get("content-type")).toBe(type);
      expect(download.headers.get("content-disposition")).toBeNull();
      expect(download.headers.get("content-security-policy")).toBe("sandbox; default-src 'none'");
    });
  }
});

describe("a declared media type the bytes contradict", () => {
  for (const [path, upload] of Object.entries(uploadPaths)) {
    it(`${path}: plain text declared video/mp4 is stored and served as application/octet-stream, as an attachment`, async () => {
      const { key: apiKey } = await createUser();
      const download = await get(await upload(apiKey, "video/mp4", new TextEncoder().encode("not a video, only words")));
      expect(download.status).toBe(200);
      expect(download.headers.get("content-type")).toBe("application/octet-stream");
      expect(download.headers.get("content-disposition")).toMatch(/^attachment/);
      expect(await download.text()).toBe("not a video, only words");
    });
  }
});
