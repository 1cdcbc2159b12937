import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../../edge/index";
import { MAX_BASE64_BODY_BYTES } from "../../../edge/files/data-uri";
import { api, createUser, fakeMp4, md5Hex, multipart, pathOf, postJson, uploadFile } from "../helpers";
import { md5OfStream, originUrl, storedFor, streamedMultipart } from "../files/fixtures";
import { expectProblem } from "../../helpers/problems";
import { HTML_PAGE, originPaths, patternBytes } from "../files/origin";

const LIMIT = Number(env.MAX_UPLOAD_BYTES);
const MiB = 1024 * 1024;

interface UploadRecord {
  url: string;
  cn_url: string;
  key: string;
  md5: string;
  size: number;
  content_type: string;
  expires_at: string;
}

/** Downloads a record's CDN URL and checks it is exactly `expected`. */
async function expectServed(record: UploadRecord, expected: Uint8Array): Promise<void> {
  const download = await api(pathOf(record.url), undefined);
  expect(download.status).toBe(200);
  expect(new Uint8Array(await download.arrayBuffer())).toEqual(expected);
}

async function expectNothingStored(userId: string): Promise<void> {
  expect(await storedFor(userId)).toEqual({ objects: [], rows: [] });
}

/** A request body that declares `declared` bytes but only ever sends a few. */
function declaredBody(declared: number): { body: ReadableStream<Uint8Array>; close: () => Promise<void> } {
  const { readable, writable } = new FixedLengthStream(declared);
  const writer = writable.getWriter();
  writer.write(fakeMp4(1024)).catch(() => {});
  return { body: readable, close: () => writer.abort().catch(() => {}) };
}

describe("POST /api/upload/file", () => {
  it("stores the file part and serves the same bytes from the CDN route", async () => {
    const { key, userId } = await createUser();
    const data = fakeMp4(100_000);
    const response = await uploadFile(key, data);
    expect(response.status).toBe(201);
    const record = await response.json<UploadRecord>();
    expect(record.key).toMatch(new RegExp(`^uploads/${userId}/[0-9a-f]{32}\\.mp4$`));
    expect(record).toMatchObject({ size: data.byteLength, md5: await md5Hex(data), content_type: "video/mp4" });
    expect(record.url).toBe(`http://localhost:8787/${record.key}`);
    expect(record.cn_url).toBe(`http://127.0.0.1:8787/${record.key}`);
    expect(record.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(record.expires_at) - Date.now()).toBeGreaterThan(86_400_000 - 60_000);
    await expectServed(record, data);
    expect(await storedFor(userId)).toEqual({ objects: [record.key], rows: [record.key] });
  });

  it("stores a streamed file of several R2 parts byte for byte", async () => {
    const { key, userId } = await createUser();
    const size = 25 * MiB + 123;
    const upload = streamedMultipart(size);
    const response = await api("/api/upload/file", key, { method: "POST", headers: { "content-type": upload.contentType }, body: upload.body });
    expect(response.status).toBe(201);
    const record = await response.json<UploadRecord>();
    expect(record).toMatchObject({ size, md5: await upload.md5 });
    const download = await api(pathOf(record.url), undefined);
    expect(await md5OfStream(download.body!)).toEqual({ md5: record.md5, size });
    expect((await storedFor(userId)).rows).toEqual([record.key]);
  });

  it("keys the file by the caller and a random id, never by the client's file name", async () => {
    const { key, userId } = await createUser();
    const response = await uploadFile(key, fakeMp4(2048), "video/mp4", "../../etc/%2f..\u202Egnp.mp4");
    expect(response.status).toBe(201);
    const record = await response.json<UploadRecord>();
    expect(record.key).toMatch(new RegExp(`^uploads/${userId}/[0-9a-f]{32}\\.mp4$`));
    const row = await env.DB.prepare("SELECT original_name FROM files WHERE key = ?").bind(record.key).first<{ original_name: string }>();
    expect(row?.original_name).toBe("%2f..gnp.mp4");
  });

  it("keeps a non-ASCII file name intact as metadata", async () => {
    const { key } = await createUser();
    const record = await (await uploadFile(key, fakeMp4(2048), "video/mp4", "vidéo 東京.mp4")).json<UploadRecord>();
    const row = await env.DB.prepare("SELECT original_name FROM files WHERE key = ?").bind(record.key).first<{ original_name: string }>();
    expect(row?.original_name).toBe("vidéo 東京.mp4");
  });

  it("refuses HTML declared as video/mp4 with CONTENT_TYPE_MISMATCH and stores nothing", async () => {
    const { key, userId } = await createUser();
    await expectProblem(await uploadFile(key, HTML_PAGE, "video/mp4", "clip.mp4"), 400, "CONTENT_TYPE_MISMATCH");
    await expectNothingStored(userId);
  });

  it("answers 415 UNSUPPORTED_MEDIA_TYPE to a body that is not multipart/form-data", async () => {
    const { key, userId } = await createUser();
    const response = await api("/api/upload/file", key, { method: "POST", headers: { "content-type": "video/mp4" }, body: fakeMp4(1024) });
    await expectProblem(response, 415, "UNSUPPORTED_MEDIA_TYPE");
    await expectNothingStored(userId);
  });

  it("answers 400 MISSING_FILE_PART when no part is named 'file'", async () => {
    const { key, userId } = await createUser();
    const form = multipart([{ name: "other", filename: "clip.mp4", type: "video/mp4", data: fakeMp4(1024) }, { name: "note", data: "hello" }]);
    const response = await api("/api/upload/file", key, { method: "POST", headers: { "content-type": form.contentType }, body: form.body });
    await expectProblem(response, 400, "MISSING_FILE_PART");
    await expectNothingStored(userId);
  });

  it.each([
    ["two small 'file' parts", 1024, 1024],
    ["a large 'file' part, then a second one", 6 * MiB, 1024],
  ])("answers 400 INVALID_MULTIPART to %s and stores neither", async (_label, firstSize, secondSize) => {
    const { key, userId } = await createUser();
    const form = multipart([
      { name: "file", filename: "a.mp4", type: "video/mp4", data: fakeMp4(firstSize) },
      { name: "file", filename: "b.mp4", type: "video/mp4", data: fakeMp4(secondSize) },
    ]);
    const response = await api("/api/upload/file", key, { method: "POST", headers: { "content-type": form.contentType }, body: form.body });
    const problem = await expectProblem(response, 400, "INVALID_MULTIPART");
    expect(problem.detail).toMatch(/more than one file part/);
    await expectNothingStored(userId);
  });

  it.each([
    ["a right-to-left override", "clip\u202Egpj.mp4", "clipgpj.mp4"],
    ["a C1 control and a zero-width joiner", "cl\u0085ip\u200D.mp4", "clip.mp4"],
    ["a path", "../../etc/clip.mp4", "clip.mp4"],
  ])("keeps a file name with %s only as sanitised metadata; the key never carries it", async (_label, filename, kept) => {
    const { key, userId } = await createUser();
    const response = await uploadFile(key, fakeMp4(1024), "video/mp4", filename);
    expect(response.status).toBe(201);
    const record = await response.json<UploadRecord>();
    expect(record.key).toMatch(new RegExp(`^uploads/${userId}/[0-9a-f]{32}\\.mp4$`));
    const row = await env.DB.prepare("SELECT original_name FROM files WHERE key = ?").bind(record.key).first<{ original_name: string }>();
    expect(row?.original_name).toBe(kept);
  });

  it.each([["NUL", "cl\u0000ip.mp4"], ["BEL and ESC", "\u0007cl\u001bip.mp4"]])("refuses a file name with %s (no part header may carry C0 controls) and stores nothing", async (_label, filename) => {
    const { key, userId } = await createUser();
    await expectProblem(await uploadFile(key, fakeMp4(1024), "video/mp4", filename), 400, "INVALID_MULTIPART");
    await expectNothingStored(userId);
  });

  it("answers 400 INVALID_MULTIPART to a Content-Type without a boundary", async () => {
    const { key } = await createUser();
    const response = await api("/api/upload/file", key, { method: "POST", headers: { "content-type": "multipart/form-data; charset=utf-8" }, body: "--x\r\n" });
    await expectProblem(response, 400, "INVALID_MULTIPART");
  });

  it("answers 400 INVALID_MULTIPART to a body cut off inside the file part and stores nothing", async () => {
    const { key, userId } = await createUser();
    const form = multipart([{ name: "file", filename: "clip.mp4", type: "video/mp4", data: fakeMp4(64 * 1024) }]);
    const truncated = form.body.subarray(0, form.body.byteLength - 100);
    const response = await api("/api/upload/file", key, { method: "POST", headers: { "content-type": form.contentType }, body: truncated });
    await expectProblem(response, 400, "INVALID_MULTIPART");
    await expectNothingStored(userId);
  });

  it("answers 400 EMPTY_FILE to an empty file part", async () => {
    const { key, userId } = await createUser();
    await expectProblem(await uploadFile(key, new Uint8Array(0)), 400, "EMPTY_FILE");
    await expectNothingStored(userId);
  });

  it("answers 413 from the declared Content-Length alone, before reading the body", async () => {
    const { key, userId } = await createUser();
    const declared = declaredBody(LIMIT + MiB);
    const response = await api("/api/upload/file", key, { method: "POST", headers: { "content-type": "multipart/form-data; boundary=x" }, body: declared.body });
    await expectProblem(response, 413, "PAYLOAD_TOO_LARGE");
    await declared.close();
    await expectNothingStored(userId);
  });
});

describe("POST /api/upload/base64", () => {
  it("decodes the data URI and stores the bytes", async () => {
    const { key } = await createUser();
    const response = await postJson("/api/upload/base64", key, { data: `data:text/plain;base64,${btoa("hello ffedge")}` });
    expect(response.status).toBe(201);
    const record = await response.json<UploadRecord>();
    expect(record).toMatchObject({ size: 12, md5: await md5Hex("hello ffedge"), content_type: "text/plain" });
    expect(record.key).toMatch(/\.txt$/);
    expect(await (await api(pathOf(record.url), undefined)).text()).toBe("hello ffedge");
  });

  it("round-trips every byte value exactly, across several decoding chunks", async () => {
    const { key } = await createUser();
    const data = fakeMp4(300_001);
    const base64 = btoa(Array.from(data, (byte) => String.fromCharCode(byte)).join(""));
    const response = await postJson("/api/upload/base64", key, { data: `data:video/mp4;base64,${base64}`, filename: "clip.mp4" });
    expect(response.status).toBe(201);
    const record = await response.json<UploadRecord>();
    expect(record).toMatchObject({ size: data.byteLength, md5: await md5Hex(data), content_type: "video/mp4" });
    await expectServed(record, data);
  });

  it("accepts base64 wrapped in lines, as RFC 2045 writes it", async () => {
    const { key } = await createUser();
    const wrapped = btoa("hello, wrapped ffedge!".repeat(10)).replace(/.{76}/g, "$&\r\n");
    const response = await postJson("/api/upload/base64", key, { data: `data:text/plain;base64,${wrapped}` });
    expect(response.status).toBe(201);
    expect(await (await api(pathOf((await response.json<UploadRecord>()).url), undefined)).text()).toBe("hello, wrapped ffedge!".repeat(10));
  });

  it.each([
    ["a plain string", "aGVsbG8="],
    ["a data URI without a media type", "data:;base64,aGVsbG8="],
    ["a data URI that is not base64", "data:text/plain,hello"],
    ["a data URI with a broken media type", "data:text;base64,aGVsbG8="],
  ])("answers 400 INVALID_DATA_URI to %s", async (_label, data) => {
    const { key, userId } = await createUser();
    await expectProblem(await postJson("/api/upload/base64", key, { data }), 400, "INVALID_DATA_URI");
    await expectNothingStored(userId);
  });

  it.each([
    ["characters outside the alphabet", "aGVs*G8="],
    ["a length that is not a multiple of 4", "aGVsbG8"],
    ["padding in the middle", "aG==bG8="],
  ])("answers 400 INVALID_BASE64 to %s", async (_label, payload) => {
    const { key, userId } = await createUser();
    await expectProblem(await postJson("/api/upload/base64", key, { data: `data:text/plain;base64,${payload}` }), 400, "INVALID_BASE64");
    await expectNothingStored(userId);
  });

  it("answers 400 INVALID_JSON to a body that is not JSON", async () => {
    const { key } = await createUser();
    const response = await api("/api/upload/base64", key, { method: "POST", headers: { "content-type": "application/json" }, body: '{"data": "data:text/plain;base64,' });
    await expectProblem(response, 400, "INVALID_JSON");
  });

  it("answers 415 UNSUPPORTED_MEDIA_TYPE to a body that is not declared as JSON", async () => {
    const { key } = await createUser();
    const response = await api("/api/upload/base64", key, { method: "POST", headers: { "content-type": "text/plain" }, body: JSON.stringify({ data: "data:text/plain;base64,aGk=" }) });
    await expectProblem(response, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("answers 400 VALIDATION_FAILED when 'data' is missing", async () => {
    const { key } = await createUser();
    const problem = await expectProblem(await postJson("/api/upload/base64", key, { url: "x" }), 400, "VALIDATION_FAILED");
    expect(problem.detail).toContain("data");
  });

  it("refuses HTML declared as image/png with CONTENT_TYPE_MISMATCH and stores nothing", async () => {
    const { key, userId } = await createUser();
    const response = await postJson("/api/upload/base64", key, { data: `data:image/png;base64,${btoa(HTML_PAGE)}` });
    await expectProblem(response, 400, "CONTENT_TYPE_MISMATCH");
    await expectNothingStored(userId);
  });

  it("answers 413 BASE64_TOO_LARGE from a declared Content-Length over the base64 cap, before reading the body, pointing to the streamed methods", async () => {
    const { key, userId } = await createUser();
    const declared = declaredBody(MAX_BASE64_BODY_BYTES + 1);
    const response = await api("/api/upload/base64", key, { method: "POST", headers: { "content-type": "application/json" }, body: declared.body });
    const problem = await expectProblem(response, 413, "BASE64_TOO_LARGE");
    expect(problem.detail).toMatch(/multipart.*\/api\/upload\/file.*tus/);
    await declared.close();
    await expectNothingStored(userId);
  });

  it("answers 413 BASE64_TOO_LARGE once a body without Content-Length passes the cap", async () => {
    const { key, userId } = await createUser();
    const chunk = new TextEncoder().encode("A".repeat(MiB));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode('{"data":"data:video/mp4;base64,'));
        sent += chunk.byteLength;
        if (sent > 2 * MAX_BASE64_BODY_BYTES) return controller.close();
        controller.enqueue(chunk);
      },
    });
    const response = await api("/api/upload/base64", key, { method: "POST", headers: { "content-type": "application/json" }, body });
    await expectProblem(response, 413, "BASE64_TOO_LARGE");
    expect(sent).toBeLessThan(2 * MAX_BASE64_BODY_BYTES);
    await expectNothingStored(userId);
  });
});

describe("POST /api/upload/url whose client leaves", () => {
  it("stops reading the origin when the request's signal aborts (the client disconnected), and stores nothing", async () => {
    const { key, userId } = await createUser();
    const leaving = new AbortController();
    const ctx = createExecutionContext();
    // 300 KiB at 1 KiB per 10 ms: about 3 s of origin, cut after half a second.
    const answered = worker.fetch(new Request("http://localhost:8787/api/upload/url", {
      method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ url: originUrl(originPaths.trickle(300, 10)) }), signal: leaving.signal,
    }), env, ctx);
    setTimeout(() => leaving.abort(), 500);
    const response = await answered;
    await waitOnExecutionContext(ctx);
    expect(response.status).not.toBe(201);
    await expectNothingStored(userId);
  });
});

describe("POST /api/upload/url", () => {
  it("downloads a file with a Content-Length and stores it byte for byte", async () => {
    const { key, userId } = await createUser();
    const response = await postJson("/api/upload/url", key, { url: originUrl(originPaths.file(300_000)) });
    expect(response.status).toBe(201);
    const record = await response.json<UploadRecord>();
    const expected = patternBytes(0, 300_000);
    expect(record).toMatchObject({ size: 300_000, md5: await md5Hex(expected), content_type: "video/mp4" });
    expect(record.key).toMatch(new RegExp(`^uploads/${userId}/[0-9a-f]{32}\\.mp4$`));
    await expectServed(record, expected);
  });

  it("downloads a chunked file of several R2 parts byte for byte", async () => {
    const { key } = await createUser();
    const size = 21 * MiB + 7;
    const response = await postJson("/api/upload/url", key, { url: originUrl(originPaths.chunked(size)) });
    expect(response.status).toBe(201);
    const record = await response.json<UploadRecord>();
    expect(record.size).toBe(size);
    const download = await api(pathOf(record.url), undefined);
    expect(await md5OfStream(download.body!)).toEqual({ md5: record.md5, size });
  });

  it("follows a redirect to an allowed host", async () => {
    const { key } = await createUser();
    const response = await postJson("/api/upload/url", key, { url: originUrl(originPaths.redirect(originUrl(originPaths.file(5000)))) });
    expect(response.status).toBe(201);
    expect((await response.json<UploadRecord>()).size).toBe(5000);
  });

  it("survives a URL whose last segment is malformed percent-encoding", async () => {
    const { key } = await createUser();
    const response = await postJson("/api/upload/url", key, { url: originUrl(`${originPaths.file(1000)}/%E0%A4%A.mp4`) });
    expect(response.status).toBe(201);
  });

  it.each([
    ["file:///etc/passwd"],
    ["gopher://example.com/_GET"],
    ["ftp://example.com/clip.mp4"],
    ["data:video/mp4;base64,AAAA"],
    ["javascript:alert(1)"],
    ["not a url"],
    ["//example.com/clip.mp4"],
    ["http://user:secret@example.com/clip.mp4"],
    ["https://user@example.com/clip.mp4"],
    ["http://example.com:8080/clip.mp4"],
    ["https://example.com:8443/clip.mp4"],
  ])("answers 400 URL_NOT_ALLOWED to %s", async (url) => {
    const { key, userId } = await createUser();
    await expectProblem(await postJson("/api/upload/url", key, { url }), 400, "URL_NOT_ALLOWED");
    await expectNothingStored(userId);
  });

  // 127.0.0.1 itself is on the test allow-list (the origin server lives there), so loopback is
  // written as 127.0.0.2 here; test/edge/lib/guarded-fetch.test.ts covers 127.0.0.1 without it.
  it.each([
    ["loopback, dotted", "http://127.0.0.2/"],
    ["loopback, decimal", "http://2130706434/"],
    ["loopback, hex", "http://0x7f000002/"],
    ["loopback, octal", "http://0177.0.0.2/"],
    ["loopback, short form", "http://127.2/"],
    ["loopback, IPv6", "http://[::1]/"],
    ["loopback, IPv4-mapped IPv6", "http://[::ffff:127.0.0.2]/"],
    ["loopback, IPv4-mapped IPv6 in hex", "http://[::ffff:7f00:2]/"],
    ["loopback, IPv4-compatible IPv6", "http://[::127.0.0.2]/"],
    ["private 10/8", "http://10.0.0.1/"],
    ["private 10/8, hex", "http://0xa000001/"],
    ["private 172.16/12", "http://172.16.5.4/"],
    ["private 192.168/16", "http://192.168.1.1/"],
    ["private, IPv4-mapped", "http://[::ffff:192.168.1.1]/"],
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/"],
    ["cloud metadata, decimal", "http://2852039166/"],
    ["link-local IPv6", "http://[fe80::1]/"],
    ["CGNAT", "http://100.64.0.1/"],
    ["CGNAT, top", "http://100.127.255.254/"],
    ["IPv6 ULA fc00::/7", "http://[fd12:3456::1]/"],
    ["IPv6 ULA fc00::", "http://[fc00::1]/"],
    ["unspecified", "http://0.0.0.0/"],
    ["unspecified, short", "http://0/"],
    ["unspecified IPv6", "http://[::]/"],
    ["multicast", "http://224.0.0.1/"],
    ["multicast IPv6", "http://[ff02::1]/"],
    ["broadcast", "http://255.255.255.255/"],
    ["NAT64 of a private address", "http://[64:ff9b::a00:1]/"],
    ["6to4 of loopback", "http://[2002:7f00:1::]/"],
    ["localhost", "http://localhost/"],
    ["localhost, upper case and trailing dot", "http://LOCALHOST./"],
    ["a localhost subdomain", "http://api.localhost/"],
    ["GCP metadata", "http://metadata.google.internal/computeMetadata/v1/"],
    ["GCP metadata, trailing dot", "http://metadata.google.internal./"],
    ["a bare metadata name", "http://metadata/"],
    ["a single-label intranet name", "http://intranet/"],
    ["an mDNS name", "http://printer.local/"],
    ["a home network name", "http://router.home.arpa/"],
  ])("answers 400 URL_HOST_BLOCKED to %s (%s)", async (_label, url) => {
    const { key, userId } = await createUser();
    await expectProblem(await postJson("/api/upload/url", key, { url }), 400, "URL_HOST_BLOCKED");
    await expectNothingStored(userId);
  });

  it.each([
    ["cloud metadata", "http://169.254.169.254/latest/meta-data/"],
    ["a decimal loopback", "http://2130706434/"],
    ["localhost", "http://localhost/"],
  ])("refuses a redirect to %s without following it", async (_label, target) => {
    const { key, userId } = await createUser();
    await expectProblem(await postJson("/api/upload/url", key, { url: originUrl(originPaths.redirect(target)) }), 400, "URL_HOST_BLOCKED");
    await expectNothingStored(userId);
  });

  it("answers 502 URL_TOO_MANY_REDIRECTS to a redirect chain longer than three hops", async () => {
    const { key } = await createUser();
    let url = originUrl(originPaths.file(100));
    for (let hop = 0; hop < 4; hop++) url = originUrl(originPaths.redirect(url));
    await expectProblem(await postJson("/api/upload/url", key, { url }), 502, "URL_TOO_MANY_REDIRECTS");
  });

  it("answers 502 URL_UNREACHABLE when nothing listens on the host", async () => {
    const { key, userId } = await createUser();
    await expectProblem(await postJson("/api/upload/url", key, { url: "http://127.0.0.1:1/clip.mp4" }), 502, "URL_UNREACHABLE");
    await expectNothingStored(userId);
  });

  it.each([404, 500, 204])("answers 502 URL_REMOTE_STATUS with remote_status when the remote answers %i", async (status) => {
    const { key, userId } = await createUser();
    const problem = await expectProblem(await postJson("/api/upload/url", key, { url: originUrl(originPaths.status(status)) }), 502, "URL_REMOTE_STATUS");
    expect(problem.remote_status).toBe(status);
    await expectNothingStored(userId);
  });

  it("refuses an HTML page served as video/mp4 with CONTENT_TYPE_MISMATCH", async () => {
    const { key, userId } = await createUser();
    await expectProblem(await postJson("/api/upload/url", key, { url: originUrl(originPaths.html()) }), 400, "CONTENT_TYPE_MISMATCH");
    await expectNothingStored(userId);
  });

  it("answers 413 when the remote declares a Content-Length over the limit, storing nothing", async () => {
    const { key, userId } = await createUser();
    await expectProblem(await postJson("/api/upload/url", key, { url: originUrl(originPaths.file(LIMIT + 1)) }), 413, "PAYLOAD_TOO_LARGE");
    await expectNothingStored(userId);
  });

  it("answers 502 URL_UNREACHABLE when the remote closes before its declared length, storing nothing", async () => {
    const { key, userId } = await createUser();
    await expectProblem(await postJson("/api/upload/url", key, { url: originUrl(originPaths.declared(MiB)) }), 502, "URL_UNREACHABLE");
    await expectNothingStored(userId);
  });

  it("answers 400 VALIDATION_FAILED to a URL longer than 2048 characters", async () => {
    const { key } = await createUser();
    await expectProblem(await postJson("/api/upload/url", key, { url: `https://example.com/${"a".repeat(2100)}` }), 400, "VALIDATION_FAILED");
  });
});
