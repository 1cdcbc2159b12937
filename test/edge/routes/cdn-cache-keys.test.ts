import { SELF, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { eraseAccount } from "../../../edge/accounts/erase";
import { tasksOfUser } from "../../../edge/tasks/erasable";
import { sweepExpiredFiles } from "../../../edge/files/sweep";
import { taskStub } from "../../../edge/lib/stubs";
import { api, createUser, fakeMp4, postJson, uploadFile } from "../helpers";
import { seedFile } from "../files/fixtures";
import { expectProblem } from "../../helpers/problems";

const HOUR = 3_600_000;

/** Every spelling of one object's CDN URL that the route serves: each must reach the same cache entry. */
function spellings(key: string): string[] {
  const directory = key.slice(0, key.lastIndexOf("/"));
  const name = key.slice(directory.length + 1);
  const dot = name.lastIndexOf(".");
  return [
    `http://localhost:8787/${key}`,
    `http://localhost:8787/${directory}/${name.slice(0, dot)}%2E${name.slice(dot + 1)}`,
    `http://localhost:8787/${directory}/%${name.charCodeAt(0).toString(16)}${name.slice(1)}`,
    `http://localhost:8787/${directory}%2F${name}`,
    `http://localhost:8787/${directory}%2f${name}`,
    `http://127.0.0.1:8787/${key}`,
    `http://another-host.example/${key}`,
    `http://LOCALHOST:8787/${key}`,
  ];
}

/** GETs `url` until this data center's cache answers it (the fill runs after the first answer). */
async function untilCached(url: string): Promise<void> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline; await scheduler.wait(50)) {
    const response = await SELF.fetch(url);
    expect(response.status, url).toBe(200);
    await response.body?.cancel();
    if (response.headers.get("cf-cache-status") === "HIT") return;
  }
  expect.fail(`${url} never came from the cache`);
}

async function cacheEverySpelling(key: string): Promise<void> {
  for (const url of spellings(key)) await untilCached(url);
}

async function expectGoneEverywhere(key: string): Promise<void> {
  for (const url of spellings(key)) await expectProblem(await SELF.fetch(url), 404, "NOT_FOUND");
}

describe("CDN cache keys", () => {
  it("keeps one cache entry per object, whatever the spelling or Host of its URL", async () => {
    const { userId } = await createUser();
    const key = await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR), body: "one entry" });
    await untilCached(`http://localhost:8787/${key}`);
    for (const url of spellings(key)) {
      const response = await SELF.fetch(url);
      expect(response.headers.get("cf-cache-status"), url).toBe("HIT");
      expect(await response.text()).toBe("one entry");
    }
  });
});

describe("CDN purges reach every spelling of a removed file's URL", () => {
  it("after the owner deletes the file", async () => {
    const { key: apiKey } = await createUser();
    const record = await (await uploadFile(apiKey, fakeMp4(4096))).json<{ key: string }>();
    await cacheEverySpelling(record.key);
    expect((await api(`/api/files/${encodeURIComponent(record.key)}`, apiKey, { method: "DELETE" })).status).toBe(204);
    await expectGoneEverywhere(record.key);
  });

  it("after the owner deletes the task that made it", async () => {
    const { key: apiKey, userId } = await createUser();
    const submitted = await postJson("/v1/tasks", apiKey, { command: "ffmpeg -i https://example.com/in.mp4 out.mp4" });
    const taskId = (await submitted.json<{ task_id: string }>()).task_id;
    const output = `outputs/${userId}/${taskId}/out.mp4`;
    await env.FILES.put(output, fakeMp4(1000), { httpMetadata: { contentType: "video/mp4" }, customMetadata: { expires_at: new Date(Date.now() + HOUR).toISOString() } });
    const task = taskStub(env, taskId);
    await task.report({ type: "started", seq: 100 });
    await task.report({ type: "completed", seq: 101, outputs: [{ filename: "out.mp4", size: 1000 }] });
    await cacheEverySpelling(output);
    expect((await api(`/v1/tasks/${taskId}`, apiKey, { method: "DELETE" })).status).toBe(204);
    await expectGoneEverywhere(output);
  });

  it("after the account is erased", async () => {
    const { userId } = await createUser();
    const keys = [
      await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR), body: "first" }),
      await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR), body: "second" }),
    ];
    for (const key of keys) await cacheEverySpelling(key);
    await eraseAccount(env, { id: userId, email: null }, tasksOfUser(env, userId));
    for (const key of keys) await expectGoneEverywhere(key);
  });

  it("after the expiry sweep removes the file", async () => {
    const { userId } = await createUser();
    const key = await seedFile(userId, { expiresAt: new Date(Date.now() + HOUR), body: "swept" });
    await cacheEverySpelling(key);
    // The row says the file has expired (its object's metadata still says otherwise): the sweep removes it.
    await env.DB.prepare("UPDATE files SET expires_at = ? WHERE key = ?").bind(new Date(Date.now() - 1000).toISOString(), key).run();
    expect(await sweepExpiredFiles(env)).toBeGreaterThanOrEqual(1);
    expect(await env.FILES.head(key)).toBeNull();
    await expectGoneEverywhere(key);
  });
});
