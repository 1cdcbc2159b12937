import { describe, expect, it } from "vitest";
import { api, createUser, fakeMp4, md5Hex, pathOf, postJson, uploadFile } from "../helpers";

describe("POST /api/upload/file", () => {
  it("stores the file part and serves the same bytes from the CDN route", async () => {
    const { key, userId } = await createUser();
    const data = fakeMp4(100_000);
    const response = await uploadFile(key, data);
    expect(response.status).toBe(201);
    const record = await response.json<Record<string, unknown>>();
    expect(record.key).toMatch(new RegExp(`^uploads/${userId}/[0-9a-f]{32}\\.mp4$`));
    expect(record.size).toBe(data.byteLength);
    expect(record.md5).toBe(await md5Hex(data));
    expect(record.content_type).toBe("video/mp4");
    expect(record.url).toBe(`http://localhost:8787/${record.key}`);
    expect(record.cn_url).toBe(`http://127.0.0.1:8787/${record.key}`);
    expect(record.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const download = await api(pathOf(record.url as string), undefined);
    expect(download.status).toBe(200);
    expect(new Uint8Array(await download.arrayBuffer())).toEqual(data);
  });
});

describe("POST /api/upload/base64", () => {
  it("decodes the data URI and stores the bytes", async () => {
    const { key } = await createUser();
    const response = await postJson("/api/upload/base64", key, { data: `data:text/plain;base64,${btoa("hello ffedge")}` });
    expect(response.status).toBe(201);
    const record = await response.json<{ url: string; size: number; md5: string; content_type: string; key: string }>();
    expect(record).toMatchObject({ size: 12, md5: await md5Hex("hello ffedge"), content_type: "text/plain" });
    expect(record.key).toMatch(/\.txt$/);
    expect(await (await api(pathOf(record.url), undefined)).text()).toBe("hello ffedge");
  });
});
