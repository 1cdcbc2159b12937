import { env } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createUser, fakeMp4, pathOf, postJson, uploadFile } from "../helpers";
import { expectProblem, seedFile } from "../files/fixtures";
import { HTML_PAGE } from "../files/origin";

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
    expect((await get(later)).headers.get("cache-control")).toBe("public, max-age=86400");
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
