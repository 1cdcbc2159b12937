import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createUser, fakeMp4, multipart, postJson, uploadFile } from "./helpers";

/**
 * The threat catalogue (shared/security/threats.md), case by case, over HTTP. Runtime cases
 * that need ffmpeg (7, 12, 15, 16) and the canary are in test/transcoder and test/e2e.
 */
const IN = "https://example.com/in.mp4";

async function refusal(command: string): Promise<{ status: number; code: string; token?: string; detail: string }> {
  const { key } = await createUser();
  const response = await postJson("/v1/tasks", key, { command });
  const body = await response.json<{ code: string; token?: string; detail: string }>();
  return { status: response.status, ...body };
}

const commandCases: [string, string, number, string][] = [
  ["1", `ffmpeg -i /etc/passwd out.mp4`, 400, "INPUT_NOT_ALLOWED"],
  ["1", `ffmpeg -i file:///etc/passwd out.mp4`, 400, "INPUT_NOT_ALLOWED"],
  ["1", `ffmpeg -i ../../etc/passwd out.mp4`, 400, "INPUT_NOT_ALLOWED"],
  ["2", `ffmpeg -i concat:/etc/passwd|/etc/hosts out.mp4`, 400, "COMMAND_SHELL_OPERATOR"],
  ["2", `ffmpeg -i 'concat:/etc/passwd|/etc/hosts' out.mp4`, 400, "INPUT_NOT_ALLOWED"],
  ["2", `ffmpeg -i pipe:0 out.mp4`, 400, "INPUT_NOT_ALLOWED"],
  ["2", `ffmpeg -i - out.mp4`, 400, "INPUT_NOT_ALLOWED"],
  ["2", `ffmpeg -i rtmp://example.com/live out.mp4`, 400, "INPUT_NOT_ALLOWED"],
  ["2", `ffmpeg -i data:text/plain,hello out.mp4`, 400, "INPUT_NOT_ALLOWED"],
  ["3", `ffmpeg -f concat -safe 0 -i ${IN} out.mp4`, 400, "OPTION_RESERVED"],
  ["4", `ffmpeg -i ${IN} -vf movie=/etc/passwd out.mp4`, 400, "FILTER_NOT_ALLOWED"],
  ["4", `ffmpeg -i ${IN} -vf drawtext=textfile=/etc/passwd out.mp4`, 400, "FILTER_NOT_ALLOWED"],
  ["4", `ffmpeg -i ${IN} -vf subtitles=/etc/passwd out.mp4`, 400, "FILTER_NOT_ALLOWED"],
  ["5", `ffmpeg -i ${IN} -filter_complex_script /tmp/x out.mp4`, 400, "OPTION_NOT_ALLOWED"],
  ["5", `ffmpeg -i ${IN} -attach /etc/passwd out.mkv`, 400, "OPTION_NOT_ALLOWED"],
  ["6", `ffmpeg -f lavfi -i testsrc out.mp4`, 400, "INPUT_NOT_ALLOWED"],
  ["6", `ffmpeg -f lavfi -i ${IN} out.mp4`, 400, "OPTION_VALUE_NOT_ALLOWED"],
  ["6", `ffmpeg -f v4l2 -i ${IN} out.mp4`, 400, "OPTION_VALUE_NOT_ALLOWED"],
  ["6", `ffmpeg -init_hw_device vaapi -i ${IN} out.mp4`, 400, "OPTION_NOT_ALLOWED"],
  ["8", `ffmpeg -i ${IN} /tmp/x.mp4`, 400, "OUTPUT_NOT_ALLOWED"],
  ["8", `ffmpeg -i ${IN} a/../../x.mp4`, 400, "OUTPUT_NOT_ALLOWED"],
  ["8", `ffmpeg -i ${IN} .hidden.mp4`, 400, "OUTPUT_NOT_ALLOWED"],
  ["8", `ffmpeg -i ${IN} ${"a".repeat(300)}.mp4`, 400, "OUTPUT_NOT_ALLOWED"],
  ["9", `ffmpeg -i ${IN} -f mpegts udp://10.0.0.1:1234`, 400, "OUTPUT_NOT_ALLOWED"],
  ["9", `ffmpeg -i ${IN} -method PUT http://example.com/u.mp4`, 400, "OPTION_NOT_ALLOWED"],
  ["9", `ffmpeg -i ${IN} -f tee "a.mp4|[f=mpegts]udp://10.0.0.1:1"`, 400, "OPTION_VALUE_NOT_ALLOWED"],
  ["10", `ffmpeg -i ${IN} -progress http://example.com/p out.mp4`, 400, "OPTION_RESERVED"],
  ["10", `ffmpeg -report -i ${IN} out.mp4`, 400, "OPTION_RESERVED"],
  ["10", `ffmpeg -i ${IN} -vstats_file /tmp/v out.mp4`, 400, "OPTION_NOT_ALLOWED"],
  ["11", `ffmpeg -protocol_whitelist file,http -i ${IN} out.mp4`, 400, "OPTION_RESERVED"],
  ["11", `ffmpeg -n -i ${IN} out.mp4`, 400, "OPTION_RESERVED"],
  ["13", `ffmpeg -stream_loop -1 -i ${IN} out.mp4`, 400, "LIMIT_EXCEEDED"],
  ["13", `ffmpeg -i ${IN} -t 99999999 out.mp4`, 400, "LIMIT_EXCEEDED"],
  ["14", `ffmpeg -i ${IN} -vf scale=65535:65535 out.mp4`, 400, "LIMIT_EXCEEDED"],
  ["14", `ffmpeg -i ${IN} -s 30000x30000 out.mp4`, 400, "LIMIT_EXCEEDED"],
  ["14", `ffmpeg -i ${IN} -threads 512 out.mp4`, 400, "LIMIT_EXCEEDED"],
  ["17", `ffmpeg ${Array.from({ length: 100 }, (_, i) => `-i https://example.com/${i}.mp4`).join(" ")} out.mp4`, 400, "LIMIT_EXCEEDED"],
  ["17", `ffmpeg -i ${IN} -metadata title=${"x".repeat(1024 * 1024)} out.mp4`, 413, "COMMAND_TOO_LONG"],
  ["19", `ffmpeg -i ${IN} out.mp4; id`, 400, "COMMAND_SHELL_OPERATOR"],
  ["19", `ffmpeg -i ${IN} $(id).mp4`, 400, "COMMAND_SHELL_OPERATOR"],
  ["19", "ffmpeg -i ${IN} `id`.mp4", 400, "COMMAND_SHELL_OPERATOR"],
  ["19", `ffmpeg -i ${IN} out.mp4 && id`, 400, "COMMAND_SHELL_OPERATOR"],
  ["19", `sh -c id`, 400, "PROGRAM_NOT_ALLOWED"],
  ["19", `ffprobe ${IN}`, 400, "PROGRAM_NOT_ALLOWED"],
];

describe("threat catalogue: commands (cases 1–19)", () => {
  it.each(commandCases)("case %s: %s → %i %s", async (_case, command, status, code) => {
    const answer = await refusal(command);
    expect(answer.code).toBe(code);
    expect(answer.status).toBe(status);
    expect(answer.detail.length).toBeGreaterThan(10);
  });
});

describe("threat catalogue: server-side request forgery (cases 20–25)", () => {
  it.each([
    ["20", "file:///etc/passwd", "URL_NOT_ALLOWED"],
    ["20", "gopher://example.com/", "URL_NOT_ALLOWED"],
    ["20", "ftp://example.com/x", "URL_NOT_ALLOWED"],
    ["21", "http://169.254.169.254/latest/meta-data/", "URL_HOST_BLOCKED"],
    // 127.0.0.2: the tests allow-list 127.0.0.1 for their own local servers.
    ["21", "http://2130706434/", "URL_HOST_BLOCKED"],
    ["21", "http://0x7f.2/", "URL_HOST_BLOCKED"],
    ["21", "http://127.2/", "URL_HOST_BLOCKED"],
    ["21", "http://[::ffff:127.0.0.1]/", "URL_HOST_BLOCKED"],
    ["21", "http://[fc00::1]/", "URL_HOST_BLOCKED"],
    ["21", "http://100.64.0.1/", "URL_HOST_BLOCKED"],
    ["21", "http://localhost/", "URL_HOST_BLOCKED"],
    ["21", "http://metadata.google.internal/", "URL_HOST_BLOCKED"],
    ["24", "https://example.com:8443/x", "URL_NOT_ALLOWED"],
    ["24", "https://user:pass@example.com/x", "URL_NOT_ALLOWED"],
  ])("case %s: /api/upload/url refuses %s with %s", async (_case, url, code) => {
    const { key } = await createUser();
    const response = await postJson("/api/upload/url", key, { url });
    expect(response.status).toBe(400);
    expect((await response.json<{ code: string }>()).code).toBe(code);
  });
});

/**
 * Cases 21, 24 and 38–39 (issue 10, finding 7): every address form and name that can be judged
 * without DNS is refused at submission, with the same code, wherever a stranger's URL enters.
 */
const SSRF_AT_SUBMISSION: [string, string, string][] = [
  ["21", "https://0177.0.0.1/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://0x7f000001/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://2852039166/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://127.2/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://１２７.０.０.２/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://[::ffff:169.254.169.254]/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://[64:ff9b::a9fe:a9fe]/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://[64:ff9b:1::a00:1]/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://[2002:a9fe:a9fe::]/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://[::10.0.0.1]/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://0.0.0.0/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://[::]/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://224.0.0.251/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://255.255.255.255/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://100.100.100.200/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://198.18.0.1/a.mp4", "URL_HOST_BLOCKED"],
  ["21", "https://203.0.113.5/a.mp4", "URL_HOST_BLOCKED"],
  ["38", "https://0x08080808/a.mp4", "URL_NOT_ALLOWED"],
  ["39", "https://metadata.google.internal/a.mp4", "URL_HOST_BLOCKED"],
  ["39", "https://nas.local/a.mp4", "URL_HOST_BLOCKED"],
  ["39", "https://app.localhost/a.mp4", "URL_HOST_BLOCKED"],
  ["39", "https://intranet/a.mp4", "URL_HOST_BLOCKED"],
  ["39", "https://files.corp/a.mp4", "URL_HOST_BLOCKED"],
  ["24", "https://example.com@169.254.169.254/a.mp4", "URL_NOT_ALLOWED"],
  ["24", "https://example.com%40evil.com/a.mp4", "URL_NOT_ALLOWED"],
  ["24", "https://example.com:8443/a.mp4", "URL_NOT_ALLOWED"],
  ["24", "https://example.com:80/a.mp4", "URL_NOT_ALLOWED"],
  // Parser differentials (issue 18, item 10): WHATWG and RFC 3986 / ffmpeg would fetch different hosts or ports.
  ["24", "https://example.com\\@127.0.0.1/a.mp4", "URL_NOT_ALLOWED"],
  ["24", "https:///example.com/a.mp4", "URL_NOT_ALLOWED"],
  ["24", "https://example\u3002com/a.mp4", "URL_NOT_ALLOWED"],
  ["24", "https://example.com:0443/a.mp4", "URL_NOT_ALLOWED"],
];

describe("threat catalogue: SSRF forms refused at submission (cases 21, 24, 38, 39)", () => {
  it.each(SSRF_AT_SUBMISSION)("case %s: %s → 400 %s as a task input, a subtitles= source, an upload URL and a webhook", async (_case, url, code) => {
    const { key } = await createUser();
    const answers = await Promise.all([
      postJson("/v1/tasks", key, { command: `ffmpeg -i '${url}' out.mp4` }),
      postJson("/v1/tasks", key, { command: `ffmpeg -i ${IN} -i '${url.replace("a.mp4", "s.srt")}' -vf "subtitles='${url.replace("a.mp4", "s.srt").replaceAll(":", "\\:")}'" out.mp4` }),
      postJson("/v1/tasks/validate", key, { command: `ffmpeg -i '${url}' out.mp4` }),
      postJson("/api/upload/url", key, { url }),
      postJson("/v1/tasks", key, { command: `ffmpeg -i ${IN} out.mp4`, webhook: url.replace("a.mp4", "hook") }),
    ]);
    for (const response of answers) {
      const body = await response.json<{ code: string }>();
      expect({ status: response.status, code: body.code }, `${response.url}: ${JSON.stringify(body)}`).toEqual({ status: 400, code });
    }
  });

  it("case 21: the development allow-list still lets the local stack use 127.0.0.1, on its own port", async () => {
    const { key } = await createUser();
    const response = await postJson("/v1/tasks/validate", key, { command: "ffmpeg -i http://127.0.0.1:8788/a.mp4 out.mp4" });
    expect(response.status).toBe(200);
  });
});

/** Cases 40–44 (issue 10, findings 9–11): what ffmpeg would read bigger, or elsewhere, than the text suggests. */
const POLICY_AT_SUBMISSION: [string, string, string][] = [
  ["40", `ffmpeg -i ${IN} -vf scale=1e4:100 out.mp4`, "LIMIT_EXCEEDED"],
  ["40", `ffmpeg -i ${IN} -vf scale=0x7fff:100 out.mp4`, "LIMIT_EXCEEDED"],
  ["40", `ffmpeg -i ${IN} -vf 'scale=(65535):100' out.mp4`, "LIMIT_EXCEEDED"],
  ["40", `ffmpeg -i ${IN} -vf scale=iw*100:ih out.mp4`, "LIMIT_EXCEEDED"],
  ["40", `ffmpeg -i ${IN} -vf pad=2*iw:2*ih out.mp4`, "LIMIT_EXCEEDED"],
  ["40", `ffmpeg -i ${IN} -r 1e3 out.mp4`, "LIMIT_EXCEEDED"],
  ["40", `ffmpeg -i ${IN} -vf 'scale=w=ld(0):h=100' out.mp4`, "FILTER_NOT_ALLOWED"],
  ["41", `ffmpeg -i ${IN} -af aresample=osr=1e8 out.wav`, "LIMIT_EXCEEDED"],
  ["41", `ffmpeg -i ${IN} -ar 0x7fffffff out.wav`, "LIMIT_EXCEEDED"],
  ["42", `ffmpeg -i ${IN} -af adelay=999999999 out.mp4`, "LIMIT_EXCEEDED"],
  ["42", `ffmpeg -i ${IN} -af apad=pad_len=1e12 out.mp4`, "LIMIT_EXCEEDED"],
  ["42", `ffmpeg -i ${IN} -vf tpad=stop=1e9 out.mp4`, "LIMIT_EXCEEDED"],
  ["42", `ffmpeg -i ${IN} -vf loop=loop=1e3:size=1 out.mp4`, "LIMIT_EXCEEDED"],
  ["43", `ffmpeg -i ${IN} -c:v libx264 -x264-params keyint=48=stats=/tmp/x out.mp4`, "OPTION_VALUE_NOT_ALLOWED"],
  ["43", `ffmpeg -i ${IN} -c:v libx265 -x265-params 'crf=20\\:csv=/tmp/x.csv' out.mp4`, "OPTION_VALUE_NOT_ALLOWED"],
  ["43", `ffmpeg -i ${IN} -c:v libsvtav1 -svtav1-params preset=8:crf=30=x out.mp4`, "OPTION_VALUE_NOT_ALLOWED"],
  ["43", `ffmpeg -i ${IN} -c:v libaom-av1 -aom-params tune=ssim=1 out.mp4`, "OPTION_VALUE_NOT_ALLOWED"],
  ["44", `ffmpeg -i ${IN} -vf subtitles=${IN} out2.mp4`, "FILTER_NOT_ALLOWED"],
  ["44", `ffmpeg -i ${IN} -f mp4 -i https://example.com/s.srt -vf subtitles=https://example.com/s.srt out.mp4`, "FILTER_NOT_ALLOWED"],
  ["44", `ffmpeg -f hls -i ${IN} out.mp4`, "OPTION_VALUE_NOT_ALLOWED"],
  ["18.8", `ffmpeg -i ${IN} -vf 'sws_flags=w=12288:h=12288;scale=640:360' out.mp4`, "FILTER_NOT_ALLOWED"],
  ["18.8", `ffmpeg -i ${IN} -filter_complex showwavespic=32768x4000,scale=640:-2 -frames:v 1 out.png`, "LIMIT_EXCEEDED"],
  ["18.8", `ffmpeg -i ${IN} -af 'aformat=r=48000|2000000,aresample=48000' out.wav`, "LIMIT_EXCEEDED"],
  ["18.8", `ffmpeg -i ${IN} -vf scale=1228:1228,tile=10x10,scale=640:-2 -frames:v 1 out.png`, "LIMIT_EXCEEDED"],
  ["18.8", `ffmpeg -i ${IN} -vf scale=12288:1920:force_original_aspect_ratio=increase,crop=1080:1920 out.mp4`, "LIMIT_EXCEEDED"],
  ["18.9", `ffmpeg -i ${IN} -vf "setpts='while(1,1)'" out.mp4`, "FILTER_NOT_ALLOWED"],
  ["18.9", `ffmpeg -i ${IN} -vf "fade=t=in:enable='while-(1,1)'" out.mp4`, "FILTER_NOT_ALLOWED"],
  ["18.9", `ffmpeg -i ${IN} -force_key_frames 'expr:while(1,1)' out.mp4`, "OPTION_VALUE_NOT_ALLOWED"],
  ["18.9", `ffmpeg -loop 1 -i https://example.com/logo.png -frames:a 1 out.mp4`, "LIMIT_EXCEEDED"],
  ["18.9", `ffmpeg -loop 1 -i https://example.com/logo.png -shortest out.mp4`, "LIMIT_EXCEEDED"],
  ["18.9", `ffmpeg -i ${IN} -af aloop=loop=10:size=2e9 out.mp4`, "LIMIT_EXCEEDED"],
  ["18.9", `ffmpeg -i ${IN} -vf zoompan=d=500000 out.mp4`, "LIMIT_EXCEEDED"],
];

describe("threat catalogue: numbers, encoder parameters and formats refused at submission (cases 40–44)", () => {
  it.each(POLICY_AT_SUBMISSION)("case %s: %s → 400 %s", async (_case, command, code) => {
    const answer = await refusal(command);
    expect({ status: answer.status, code: answer.code }, answer.detail).toEqual({ status: 400, code });
    expect(answer.token).toBeTruthy();
  });
});

describe("threat catalogue: uploads and downloads (cases 26–30)", () => {
  it("case 26: invalid base64, a data URI without a media type, a body without a file part → 4xx, nothing stored", async () => {
    const { key, userId } = await createUser();
    expect((await (await postJson("/api/upload/base64", key, { data: "data:text/plain;base64,@@@" })).json<{ code: string }>()).code).toBe("INVALID_BASE64");
    expect((await (await postJson("/api/upload/base64", key, { data: "data:;base64,aGk=" })).json<{ code: string }>()).code).toBe("INVALID_DATA_URI");
    const form = multipart([{ name: "other", data: "x" }]);
    const missing = await api("/api/upload/file", key, { method: "POST", headers: { "content-type": form.contentType }, body: form.body });
    expect((await missing.json<{ code: string }>()).code).toBe("MISSING_FILE_PART");
    expect((await env.FILES.list({ prefix: `uploads/${userId}/` })).objects).toEqual([]);
  });

  it("case 26: a declared size over the limit → 413 before anything is read", async () => {
    const { key } = await createUser();
    const response = await postJson("/v1/uploads/sign", key, { filename: "big.mp4", size: 5 * 1024 ** 3, content_type: "video/mp4" });
    expect(response.status).toBe(413);
  });

  it("case 27: hostile file names never reach the key", async () => {
    const { key, userId } = await createUser();
    for (const name of ["../../x.mp4", "%2f..%2fx.mp4", "a\u202Egpj.mp4"]) {
      const response = await uploadFile(key, fakeMp4(), "video/mp4", name);
      const record = await response.json<{ key: string }>();
      expect(response.status, `${JSON.stringify(name)}: ${JSON.stringify(record)}`).toBe(201);
      expect(record.key).toMatch(new RegExp(`^uploads/${userId}/[0-9a-f]{32}\\.mp4$`));
    }
    // A NUL cannot even stand in a multipart header (refused as malformed); as JSON it can.
    const withNul = await (await postJson("/api/upload/base64", key, { data: `data:video/mp4;base64,${btoa("\0\0\0\x18ftypisom")}`, filename: "evil\u0000/../x.mp4" })).json<{ key: string }>();
    expect(withNul.key).toMatch(new RegExp(`^uploads/${userId}/[0-9a-f]{32}\\.mp4$`));
  });

  it("case 28: HTML, SVG, XML and JavaScript are never served inline", async () => {
    const { key } = await createUser();
    for (const [data, type] of [["<html><script>alert(1)</script>", "text/html"], ["<svg onload=alert(1)>", "image/svg+xml"], ["<?xml version='1.0'?><x/>", "application/xml"], ["alert(1)", "text/javascript"]] as const) {
      const record = await (await postJson("/api/upload/base64", key, { data: `data:${type};base64,${btoa(data)}` })).json<{ url: string }>();
      const download = await api(new URL(record.url).pathname, undefined);
      expect(download.headers.get("content-disposition")).toMatch(/^attachment/);
      expect(download.headers.get("x-content-type-options")).toBe("nosniff");
    }
  });

  it("case 29: two users' identical files are independent objects", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const a = await (await uploadFile(alice.key, fakeMp4())).json<{ key: string; md5: string }>();
    const b = await (await uploadFile(bob.key, fakeMp4())).json<{ key: string; md5: string }>();
    expect(a.key).not.toBe(b.key);
    expect(a.md5).toBe(b.md5);
    await env.FILES.delete(a.key);
    expect(await env.FILES.head(b.key)).not.toBeNull();
  });

  it("case 30: a file past expires_at is 404 before the sweep", async () => {
    const { key } = await createUser();
    const record = await (await uploadFile(key, fakeMp4())).json<{ key: string; url: string }>();
    const object = (await env.FILES.get(record.key))!;
    await env.FILES.put(record.key, await object.arrayBuffer(), { customMetadata: { ...object.customMetadata, expires_at: new Date(Date.now() - 1000).toISOString() } });
    expect((await api(new URL(record.url).pathname, undefined)).status).toBe(404);
  });
});

describe("threat catalogue: authentication and isolation (cases 31–33)", () => {
  it("case 31: missing, malformed, unknown, revoked and query-string keys → one identical 401", async () => {
    const { key } = await createUser();
    const revoked = await createUser();
    await env.DB.prepare("UPDATE api_keys SET revoked_at = ? WHERE user_id = (SELECT id FROM users WHERE name = ?)").bind(new Date().toISOString(), revoked.name).run();
    const bodies = await Promise.all([
      api("/v1/me", undefined),
      api("/v1/me", undefined, { headers: { authorization: "Bearer nope" } }),
      api("/v1/me", `ffe_${"A".repeat(43)}`),
      api("/v1/me", revoked.key),
      api(`/v1/me?key=${key}&api_key=${key}`, undefined),
    ].map(async (request) => {
      const response = await request;
      expect(response.status).toBe(401);
      return response.text();
    }));
    expect(new Set(bodies).size).toBe(1);
  });

  it("case 32: user B gets 404 for user A's task, its events, logs, webhooks and cancel", async () => {
    const alice = await createUser();
    const bob = await createUser();
    const { task_id } = await (await postJson("/v1/tasks", alice.key, { command: `ffmpeg -i ${IN} out.mp4` })).json<{ task_id: string }>();
    for (const path of [`/v1/tasks/${task_id}`, `/v1/tasks/${task_id}/events`, `/v1/tasks/${task_id}/logs`, `/v1/tasks/${task_id}/webhooks`]) {
      expect((await api(path, bob.key)).status, path).toBe(404);
    }
    expect((await api(`/v1/tasks/${task_id}/cancel`, bob.key, { method: "POST" })).status).toBe(404);
    const upload = await (await uploadFile(alice.key, fakeMp4())).json<{ key: string }>();
    expect((await api(`/api/files/${encodeURIComponent(upload.key)}`, bob.key, { method: "DELETE" })).status).toBe(404);
  });

  it("case 33: keys are stored only as a SHA-256 hash and a display prefix", async () => {
    const { key, userId } = await createUser();
    const rows = await env.DB.prepare("SELECT * FROM api_keys WHERE user_id = ?").bind(userId).all<Record<string, string>>();
    const stored = JSON.stringify(rows.results);
    expect(stored).not.toContain(key);
    expect(rows.results[0]!.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(key.startsWith(String(rows.results[0]!.prefix))).toBe(true);
  });
});

describe("threat catalogue: webhooks (case 34)", () => {
  it("case 34: a webhook on a blocked address is refused at submission", async () => {
    const { key } = await createUser();
    for (const webhook of ["https://169.254.169.254/hook", "https://127.0.0.2/hook", "https://[::1]/hook", "http://localhost/hook"]) {
      const response = await postJson("/v1/tasks", key, { command: `ffmpeg -i ${IN} out.mp4`, webhook });
      expect(response.status).toBe(400);
      expect(["URL_HOST_BLOCKED", "URL_NOT_ALLOWED"]).toContain((await response.json<{ code: string }>()).code);
    }
  });
});
